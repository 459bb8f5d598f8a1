// Tests of rechunk on Arrays: targets as users write them, every method through
// compute(), planned steps as layers, and the shuffle's cleanup after a
// failing source. The graphs' shape is tested on the layers
// (rechunk_layer_test.cpp).
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

#include "array/rechunk/test_util.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;
using namespace tessera::array;
using testing::every_method;
using testing::iota;
using testing::TempDir;
namespace fs = std::filesystem;

namespace {

Shape shape_of(const ChunkSizes& c) {
  Shape s;
  for (const auto& axis : c) s.push_back(std::accumulate(axis.begin(), axis.end(), int64_t{0}));
  return s;
}

}  // namespace

TEST_CASE("property: every method gives the input's elements in the new chunks (1 to 4 axes)") {
  std::mt19937_64 rng(1130);
  TempDir scratch;
  for (int trial = 0; trial < 25; ++trial) {
    ChunkSizes old_chunks, new_chunks;
    std::tie(old_chunks, new_chunks) = testing::random_case(rng, /*allow_empty=*/false);
    const NDArray data = iota(shape_of(old_chunks));
    const Array x = from_ndarray(data, Chunks(old_chunks));
    for (const auto& method : every_method(scratch.path.string())) {
      const auto& options = method.second;
      CAPTURE(method.first);
      CAPTURE(Chunks(old_chunks).str());
      CAPTURE(Chunks(new_chunks).str());
      const Array y = rechunk(x, Chunks(new_chunks), options);
      CHECK(y.chunks() == Chunks(new_chunks));
      CHECK(array_equal(y.compute({.num_workers = 2}), data));
    }
  }
  CHECK(scratch.entries() == 0);
}

TEST_CASE("empty arrays, 1-element blocks, single blocks and equal chunkings") {
  const Array empty = from_ndarray(NDArray::zeros(DType::float64(), {0, 4}), {1, 2});
  const Array e2 = rechunk(empty, {-1, 4});
  CHECK(e2.chunks() == Chunks({{0}, {4}}));
  CHECK(e2.compute().shape() == Shape{0, 4});

  const NDArray data = iota({5, 3});
  const Array ones = from_ndarray(data, 1);
  for (const auto& method : every_method("")) {
    const auto& options = method.second;
    CAPTURE(method.first);
    CHECK(array_equal(rechunk(ones, -1, options).compute(), data));
    CHECK(array_equal(rechunk(rechunk(ones, -1, options), 1, options).compute(), data));
  }
  const Array same = rechunk(ones, 1);
  CHECK(same.name() == ones.name());  // nothing to do: the same array
}

TEST_CASE("a many-to-many rechunk under a small limit goes through an intermediate step") {
  const NDArray data = iota({64, 64});
  const Array x = from_ndarray(data, {4, 64});
  const Array y = rechunk(x, {64, 4}, {.method = RechunkMethod::tasks, .block_size_limit = 64 * 16 * 4});
  CHECK(y.layers().size() >= 3);  // input, intermediate, output
  CHECK(array_equal(y.compute({.num_workers = 2}), data));
}

// A fused task holds the whole old blocks it copies from: under a memory limit
// it can need more than the limit, which the run refuses. fused_task_limit
// makes those new blocks from getitem pieces instead.
TEST_CASE("tasks under a memory limit: fused_task_limit keeps every task within it") {
  const NDArray data = iota({256, 256});
  const Array x = from_ndarray(data, {8, 256});
  const int64_t limit = 4 * x.nbytes() / 32;  // four old blocks
  RechunkOptions options{.method = RechunkMethod::tasks, .block_size_limit = limit / 4};
  const GetOptions run{.num_workers = 1, .memory_limit = static_cast<size_t>(limit)};
  CHECK_THROWS_AS(rechunk(x, {256, 2}, options).compute(run), MemoryLimitError);
  options.fused_task_limit = limit;
  CHECK(array_equal(rechunk(x, {256, 2}, options).compute(run), data));
  CHECK(array_equal(rechunk(x, {256, 2}, options).compute({.num_workers = 2, .memory_limit = run.memory_limit}), data));
}

TEST_CASE("shuffle: no scratch file is left after a run, or after a failing task") {
  TempDir scratch;
  const Array x = from_ndarray(iota({8, 8}), {1, 8});
  const Array y = rechunk(x, {8, 1}, {.method = RechunkMethod::shuffle, .scratch_dir = scratch.path.string()});
  const NDArray z = y.compute({.num_workers = 2});
  CHECK(array_equal(z, iota({8, 8})));
  CHECK(scratch.entries() == 0);

  BlockMaker failing = [](std::span<const int64_t> offset, const Shape& shape) -> NDArray {
    if (offset[0] == 5) throw std::runtime_error("block 5 cannot be read");
    return NDArray::zeros(DType::float64(), shape);
  };
  const Array bad = from_blocks(failing, DType::float64(), {8, 8}, {1, 8});
  const Array w = rechunk(bad, {8, 1}, {.method = RechunkMethod::shuffle, .scratch_dir = scratch.path.string()});
  REQUIRE_THROWS_AS(w.compute({.num_workers = 2}), TaskError);
  CHECK(scratch.entries() == 0);
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
