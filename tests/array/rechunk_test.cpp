// Tests of the rechunk graph rewrite: every method gives the same elements as
// the input, the graphs have dask's shape, and the shuffle cleans up.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <map>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "array/rechunk_test_util.hpp"
#include "tessera/array/creation.hpp"
#include "tessera/array/ndarray.hpp"
#include "tessera/array/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;
using namespace tessera::array;
namespace fs = std::filesystem;

namespace {

NDArray iota(const Shape& shape) {
  std::vector<int32_t> v(static_cast<size_t>(testing::product(shape)));
  std::iota(v.begin(), v.end(), 0);
  return NDArray::from_vector(v, shape);
}

Shape shape_of(const ChunkSizes& c) {
  Shape s;
  for (const auto& axis : c) s.push_back(std::accumulate(axis.begin(), axis.end(), int64_t{0}));
  return s;
}

// The keys of `y`'s graph whose name starts with `prefix`.
size_t count_keys(const Array& y, const std::string& prefix) {
  const Graph g = y.graph();
  return static_cast<size_t>(std::count_if(g.keys().begin(), g.keys().end(), [&](const Key& k) {
    return k.name().substr(0, prefix.size()) == prefix;
  }));
}

// A fresh directory under the system's temporary one, removed at scope exit.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("tessera-rechunk-test-" + std::to_string(::getpid()) + "-" +
                                        std::to_string(counter()++));
    fs::create_directories(path);
  }
  ~TempDir() { fs::remove_all(path); }
  size_t entries() const { return static_cast<size_t>(std::distance(fs::directory_iterator(path), {})); }
  static std::atomic<int>& counter() {
    static std::atomic<int> n{0};
    return n;
  }
};

std::vector<std::pair<std::string, RechunkOptions>> every_method(const std::string& scratch) {
  return {{"tasks fused", {.method = RechunkMethod::tasks}},
          {"tasks unfused", {.method = RechunkMethod::tasks, .fuse = false}},
          {"tasks, tiny limit", {.method = RechunkMethod::tasks, .block_size_limit = 16}},
          {"shuffle on disk", {.method = RechunkMethod::shuffle, .scratch_dir = scratch}},
          {"shuffle in memory", {.method = RechunkMethod::shuffle, .disk = false}},
          {"automatic", {.method = RechunkMethod::automatic, .scratch_dir = scratch}}};
}

}  // namespace

TEST_CASE("property: every method gives the input's elements in the new chunks (1 to 4 axes)") {
  std::mt19937_64 rng(1130);
  TempDir scratch;
  for (int trial = 0; trial < 60; ++trial) {
    auto [old_chunks, new_chunks] = testing::random_case(rng, /*allow_empty=*/false);
    const NDArray data = iota(shape_of(old_chunks));
    const Array x = from_ndarray(data, Chunks(old_chunks));
    for (const auto& [label, options] : every_method(scratch.path.string())) {
      CAPTURE(label);
      CAPTURE(Chunks(old_chunks).str());
      CAPTURE(Chunks(new_chunks).str());
      const Array y = rechunk(x, Chunks(new_chunks), options);
      CHECK(y.chunks() == Chunks(new_chunks));
      CHECK(array_equal(y.compute({.num_workers = 2}), data));
    }
  }
  CHECK(scratch.entries() == 0);
}

TEST_CASE("every method keeps the dtype and the values (float64, int8, complex128)") {
  for (DType dtype : {DType::float64(), DType::int8(), DType::complex128()}) {
    const NDArray data = iota({6, 10}).astype(dtype);
    const Array x = from_ndarray(data, std::vector<std::vector<int64_t>>{{1, 5}, {3, 3, 4}});
    for (const auto& [label, options] : every_method("")) {
      CAPTURE(label);
      const Array y = rechunk(x, {4, {7, 3}}, options);
      CHECK(y.dtype() == dtype);
      CHECK(array_equal(y.compute(), data));
    }
  }
}

TEST_CASE("empty arrays, 1-element blocks, single blocks and equal chunkings") {
  const Array empty = from_ndarray(NDArray::zeros(DType::float64(), {0, 4}), {1, 2});
  const Array e2 = rechunk(empty, {-1, 4});
  CHECK(e2.chunks() == Chunks({{0}, {4}}));
  CHECK(e2.compute().shape() == Shape{0, 4});

  const NDArray data = iota({5, 3});
  const Array ones = from_ndarray(data, 1);
  for (const auto& [label, options] : every_method("")) {
    CAPTURE(label);
    CHECK(array_equal(rechunk(ones, -1, options).compute(), data));
    CHECK(array_equal(rechunk(rechunk(ones, -1, options), 1, options).compute(), data));
  }
  const Array same = rechunk(ones, 1);
  CHECK(same.name() == ones.name());  // nothing to do: the same array
}

//   input   |--0--|--1--|--2--|
//   output  |-A-|-B-|--C--|-D-|
TEST_CASE("tasks graph of the 1-D example: splits, merges, and which input feeds which output") {
  const Array x = from_ndarray(iota({15}), 5);
  const Array y = rechunk(x, std::vector<std::vector<int64_t>>{{3, 4, 5, 3}},
                          {.method = RechunkMethod::tasks, .fuse = false});
  CHECK(y.name().rfind("rechunk-merge-", 0) == 0);
  const Graph g = y.graph();
  // A, B, C, D each take a part of a block: six getitems, one per piece.
  CHECK(count_keys(y, "rechunk-split-") == 6);
  const Node& b = g.at(y.block_key({1}));
  REQUIRE(b.is_task());
  std::vector<Key> feeding;
  for (const Key& split : b.task().dependencies()) {
    for (const Key& in : g.at(split).task().dependencies()) feeding.push_back(in);
  }
  CHECK(feeding == std::vector<Key>{x.block_key({0}), x.block_key({1})});
  // A is one part of block 0: an alias of its (contiguous) getitem.
  CHECK(g.at(y.block_key({0})).is_alias());

  const Array fused = rechunk(x, std::vector<std::vector<int64_t>>{{3, 4, 5, 3}}, {.method = RechunkMethod::tasks});
  CHECK(count_keys(fused, "rechunk-split-") == 0);
  CHECK(fused.graph().at(fused.block_key({2})).task().dependencies() ==
        std::vector<Key>{x.block_key({1}), x.block_key({2})});
}

TEST_CASE("a new block that is a whole old block is an alias of it") {
  const Array x = from_ndarray(iota({4, 6}), {2, 3});
  const Array y = rechunk(x, {2, 6}, {.method = RechunkMethod::tasks});
  const Graph g = y.graph();
  const Array z = rechunk(x, std::vector<std::vector<int64_t>>{{2, 2}, {3, 1, 2}}, {.method = RechunkMethod::tasks});
  const Graph gz = z.graph();
  CHECK(gz.at(z.block_key({1, 0})).is_alias());
  CHECK(gz.at(z.block_key({1, 0})).target() == x.block_key({1, 0}));
  CHECK(g.at(y.block_key({0, 0})).is_task());
  const Array s = rechunk(x, std::vector<std::vector<int64_t>>{{2, 2}, {3, 1, 2}}, {.method = RechunkMethod::shuffle});
  CHECK(s.graph().at(s.block_key({0, 0})).target() == x.block_key({0, 0}));
}

TEST_CASE("a many-to-many rechunk under a small limit goes through an intermediate step") {
  const NDArray data = iota({64, 64});
  const Array x = from_ndarray(data, {4, 64});
  const Array y = rechunk(x, {64, 4}, {.method = RechunkMethod::tasks, .block_size_limit = 64 * 16 * 4});
  CHECK(y.layers().size() >= 3);  // input, intermediate, output
  CHECK(array_equal(y.compute({.num_workers = 2}), data));
}

TEST_CASE("shuffle: one scratch, barrier per partial; outputs are views of the scratch") {
  // Axis 0: (5, 5) to (2, 3, 5) is two partials; axis 1 one.
  const Array x = from_ndarray(iota({10, 4}), {5, 4});
  const Array y = rechunk(x, std::vector<std::vector<int64_t>>{{2, 3, 5}, {4}},
                          {.method = RechunkMethod::shuffle, .disk = false});
  CHECK(y.name().rfind("rechunk-shuffle-", 0) == 0);
  CHECK(count_keys(y, "rechunk-barrier-") == 1);  // the second partial is block 1 whole: an alias
  CHECK(count_keys(y, "rechunk-scratch-") == 1);
  CHECK(count_keys(y, "rechunk-transfer-") == 1);
  Result r = get(y.graph(), std::vector<Key>{y.block_key({0, 0}), y.block_key({1, 0})});
  const NDArray& a = r[0].as<NDArray>();
  const NDArray& b = r[1].as<NDArray>();
  CHECK(a.buffer().data() == b.buffer().data());
  CHECK(b.offset() == 2 * 4 * 4);
  CHECK(b.is_c_contiguous());
}

TEST_CASE("shuffle: no scratch file is left after a run, or after a failing task") {
  TempDir scratch;
  const Array x = from_ndarray(iota({8, 8}), {1, 8});
  const Array y = rechunk(x, {8, 1}, {.method = RechunkMethod::shuffle, .scratch_dir = scratch.path.string()});
  const NDArray z = y.compute({.num_workers = 2});
  CHECK(array_equal(z, iota({8, 8})));
  CHECK(scratch.entries() == 0);

  BlockMaker failing = [](absl::Span<const int64_t> offset, const Shape& shape) -> NDArray {
    if (offset[0] == 5) throw std::runtime_error("block 5 cannot be read");
    return NDArray::zeros(DType::float64(), shape);
  };
  const Array bad = from_blocks(failing, DType::float64(), {8, 8}, {1, 8});
  const Array w = rechunk(bad, {8, 1}, {.method = RechunkMethod::shuffle, .scratch_dir = scratch.path.string()});
  REQUIRE_THROWS_AS(w.compute({.num_workers = 2}), TaskError);
  CHECK(scratch.entries() == 0);
}

TEST_CASE("shuffle: a scratch directory that does not exist fails the run with its path") {
  const Array x = from_ndarray(iota({4, 4}), {1, 4});
  const std::string missing = "/nonexistent-tessera-dir";
  const Array y = rechunk(x, {4, 1}, {.method = RechunkMethod::shuffle, .scratch_dir = missing});
  try {
    y.compute();
    FAIL("expected a TaskError");
  } catch (const TaskError& e) {
    CHECK(e.message().find(missing + "/tessera-rechunk-") != std::string::npos);
    CHECK(e.message().find("cannot create a rechunk scratch file") != std::string::npos);
  }
}

TEST_CASE("targets: keep, std::nullopt and missing map axes keep their chunks; -1 takes the whole axis") {
  const Array x = from_ndarray(iota({10, 12}), {3, 5});
  CHECK(rechunk(x, {keep, 6}).chunks() == Chunks({{3, 3, 3, 1}, {6, 6}}));
  CHECK(rechunk(x, {std::nullopt, -1}).chunks() == Chunks({{3, 3, 3, 1}, {12}}));
  CHECK(rechunk(x, std::map<size_t, AxisChunks>{{1, 4}}).chunks() == Chunks({{3, 3, 3, 1}, {4, 4, 4}}));
  CHECK(rechunk(x, std::map<size_t, RechunkAxis>{{0, -1}, {1, keep}}).chunks() == Chunks({{10}, {5, 5, 2}}));
  CHECK(rechunk(x, {{5, 5}, {2, 10}}).chunks() == Chunks({{5, 5}, {2, 10}}));
  CHECK(rechunk(x, 4).chunks() == Chunks({{4, 4, 2}, {4, 4, 4}}));
}

TEST_CASE("bad targets raise ChunkError saying what was expected and found") {
  const Array x = from_ndarray(iota({10, 12}), {3, 5});
  REQUIRE_THROWS_WITH_AS(rechunk(x, {keep, 6, 2}), "rechunk: expected chunks for 2 axes, found 3", ChunkError);
  REQUIRE_THROWS_WITH_AS(rechunk(x, std::map<size_t, AxisChunks>{{2, 4}}),
                         "rechunk: expected axes below 2 in the per-axis map, found 2", ChunkError);
  CHECK_THROWS_AS(rechunk(x, {{5, 4}, keep}), ChunkError);  // normalize_chunks: does not add up
  CHECK_THROWS_AS(rechunk(x, {0, keep}), ChunkError);
}
