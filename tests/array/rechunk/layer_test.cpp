// Tests of the rechunk layers run by the scheduler on literal input blocks:
// every method gives the input's elements, graphs have dask's shape, and the
// shuffle's scratch never outlives a run.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <numeric>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>

#include "array/rechunk/blocks.hpp"
#include "array/rechunk/test_util.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;
using namespace tessera::array;
using testing::every_method;
using testing::iota;
using testing::TempDir;
namespace ad = tessera::array::detail;
namespace fs = std::filesystem;

namespace {

std::vector<int64_t> block_offset(const Chunks& c, std::span<const int64_t> index) {
  return c.block_offset({index.begin(), index.end()});
}

// A graph holding `data`'s blocks in `old_chunks` as literals named "x", and
// the layers of a rechunk to `target`; `out` gets the last step's name.
struct Rechunked {
  Graph graph;
  std::string name = "x";
  size_t steps = 0;
};

Rechunked build(const NDArray& data, const Chunks& old_chunks, const Chunks& target, const RechunkOptions& options) {
  Rechunked r;
  tessera::array::for_each_index(old_chunks.numblocks(), [&](std::span<const int64_t> i) {
    r.graph.put(Key("x", i), Value(ad::box_view(data, block_offset(old_chunks, i),
                                                    old_chunks.block_shape({i.begin(), i.end()}))
                                         .copy()));
  });
  ad::StepInput in{"x", old_chunks, data.dtype()};
  for (const ad::PlannedStep& s : ad::plan_steps(in, target, options)) {
    // absl::StrCat, not "t" + std::to_string(): g++ 12 -O3 warns falsely (-Wrestrict) on the latter.
    ad::Step layer = ad::make_layer(in, s, options, absl::StrCat("t", r.steps++));
    for (uint32_t k = 0; k < layer.layer.size(); ++k) r.graph.set(layer.layer.key(k), layer.layer.node(k));
    in = {layer.name, s.chunks, data.dtype()};
  }
  r.name = in.name;
  return r;
}

// Runs the rechunk and assembles the new blocks into one array.
NDArray run(const NDArray& data, const Chunks& old_chunks, const Chunks& target, const RechunkOptions& options,
            int workers = 2) {
  Rechunked r = build(data, old_chunks, target, options);
  std::vector<Key> keys;
  tessera::array::for_each_index(target.numblocks(), [&](std::span<const int64_t> i) { keys.emplace_back(r.name, i); });
  Result result = get(r.graph, keys, {.num_workers = workers});
  NDArray out = NDArray::empty(data.dtype(), data.shape());
  size_t n = 0;
  tessera::array::for_each_index(target.numblocks(), [&](std::span<const int64_t> i) {
    const NDArray& block = result[n++].as<NDArray>();
    REQUIRE(block.shape() == target.block_shape({i.begin(), i.end()}));
    CHECK(block.is_c_contiguous());
    ad::box_view(out, block_offset(target, i), block.shape()).assign(block);
  });
  return out;
}

size_t count_keys(const Graph& g, const std::string& prefix) {
  size_t n = 0;
  for (const Key& k : g.keys()) n += k.name().substr(0, prefix.size()) == prefix;
  return n;
}

}  // namespace

TEST_CASE("property: every method gives the input's elements in the new chunks (1 to 4 axes)") {
  std::mt19937_64 rng(1130);
  TempDir scratch;
  for (int trial = 0; trial < 80; ++trial) {
    auto [old_sizes, new_sizes] = testing::random_case(rng, /*allow_empty=*/false);
    const Chunks old_chunks(old_sizes), target(new_sizes);
    const NDArray data = iota(old_chunks.shape());
    for (const auto& method : every_method(scratch.path.string())) {
      const auto& options = method.second;
      CAPTURE(method.first);
      CAPTURE(old_chunks.str());
      CAPTURE(target.str());
      CHECK(array_equal(run(data, old_chunks, target, options), data));
    }
  }
  CHECK(scratch.entries() == 0);
}

TEST_CASE("every method keeps the dtype and the values (float64, int8, complex128)") {
  const Chunks old_chunks({{1, 5}, {3, 3, 4}});
  const Chunks target({{4, 2}, {7, 3}});
  for (DType dtype : {DType::float64(), DType::int8(), DType::complex128()}) {
    const NDArray data = iota({6, 10}, dtype);
    for (const auto& method : every_method("")) {
      const auto& options = method.second;
      CAPTURE(method.first);
      const NDArray out = run(data, old_chunks, target, options, 1);
      CHECK(out.dtype() == dtype);
      CHECK(array_equal(out, data));
    }
  }
}

TEST_CASE("empty arrays get empty blocks made from nothing; equal chunks make no step") {
  const NDArray empty = NDArray::zeros(DType::float64(), {0, 4});
  Rechunked r = build(empty, Chunks({{0}, {2, 2}}), Chunks({{0}, {4}}), {});
  CHECK(r.steps == 1);
  const NDArray block = get(r.graph, Key(r.name, {0, 0})).as<NDArray>();
  CHECK(block.shape() == Shape{0, 4});
  CHECK(r.graph.at(Key(r.name, {0, 0})).task().dependencies().empty());
  CHECK(build(iota({4}), Chunks({{2, 2}}), Chunks({{2, 2}}), {}).steps == 0);
}

//   input   |--0--|--1--|--2--|
//   output  |-A-|-B-|--C--|-D-|
TEST_CASE("tasks graph of the 1-D example: getitems, concatenates, and which input feeds which output") {
  const RechunkOptions unfused{.method = RechunkMethod::tasks, .fuse = false};
  Rechunked r = build(iota({15}), Chunks({{5, 5, 5}}), Chunks({{3, 4, 5, 3}}), unfused);
  CHECK(r.name.rfind("rechunk-merge-", 0) == 0);
  CHECK(count_keys(r.graph, "rechunk-split-") == 6);  // A, D one piece each; B, C two
  const Node& b = r.graph.at(Key(r.name, {1}));
  REQUIRE(b.is_task());
  CHECK(b.task().function_name() == "rechunk_concatenate");
  std::vector<Key> feeding;
  for (const Key& split : b.task().dependencies()) {
    for (const Key& in : r.graph.at(split).task().dependencies()) feeding.push_back(in);
  }
  CHECK(feeding == std::vector<Key>{Key("x", {0}), Key("x", {1})});
  CHECK(r.graph.at(Key(r.name, {0})).is_alias());  // A is one part of block 0: its getitem

  Rechunked fused = build(iota({15}), Chunks({{5, 5, 5}}), Chunks({{3, 4, 5, 3}}), {.method = RechunkMethod::tasks});
  CHECK(count_keys(fused.graph, "rechunk-split-") == 0);
  const Task& c = fused.graph.at(Key(fused.name, {2})).task();
  CHECK(c.function_name() == "rechunk_copy");
  CHECK(c.dependencies() == std::vector<Key>{Key("x", {1}), Key("x", {2})});
}

//   axis 0 as in the 1-D example; axis 1: input |--α--|--β--|, output |Σ|Τ|--Υ--|
TEST_CASE("tasks graph of the 2-D example: (B, Σ) is fed by (0, α) and (1, α)") {
  Rechunked r = build(iota({15, 8}), Chunks({{5, 5, 5}, {4, 4}}), Chunks({{3, 4, 5, 3}, {2, 2, 4}}),
                      {.method = RechunkMethod::tasks});
  CHECK(r.graph.at(Key(r.name, {1, 0})).task().dependencies() == std::vector<Key>{Key("x", {0, 0}), Key("x", {1, 0})});
}

TEST_CASE("a new block that is a whole old block is an alias of it, in both methods") {
  const Chunks old_chunks({{2, 2}, {3, 3}});
  const Chunks target({{2, 2}, {3, 1, 2}});
  for (RechunkMethod m : {RechunkMethod::tasks, RechunkMethod::shuffle}) {
    Rechunked r = build(iota({4, 6}), old_chunks, target, {.method = m, .disk = false});
    const Node& whole = r.graph.at(Key(r.name, {1, 0}));
    REQUIRE(whole.is_alias());
    CHECK(whole.target() == Key("x", {1, 0}));
    CHECK(r.graph.at(Key(r.name, {1, 1})).is_task());
  }
}

TEST_CASE("a many-to-many rechunk under a small limit goes through an intermediate step") {
  const NDArray data = iota({64, 64});
  const RechunkOptions options{.method = RechunkMethod::tasks, .block_size_limit = 64 * 16 * 4};
  Rechunked r = build(data, Chunks({std::vector<int64_t>(16, 4), {64}}), Chunks({{64}, std::vector<int64_t>(16, 4)}),
                      options);
  CHECK(r.steps >= 2);
  CHECK(array_equal(run(data, Chunks({std::vector<int64_t>(16, 4), {64}}), Chunks({{64}, std::vector<int64_t>(16, 4)}),
                        options),
                    data));
}

TEST_CASE("shuffle: one scratch and one barrier per partial; new blocks are views of the scratch") {
  // Axis 0: (5, 5) to (2, 3, 5) is partials {0, 1} <- 0 and {2} <- 1 (an alias).
  const RechunkOptions options{.method = RechunkMethod::shuffle, .disk = false};
  Rechunked r = build(iota({10, 4}), Chunks({{5, 5}, {4}}), Chunks({{2, 3, 5}, {4}}), options);
  CHECK(r.name.rfind("rechunk-shuffle-", 0) == 0);
  CHECK(count_keys(r.graph, "rechunk-barrier-") == 1);
  CHECK(count_keys(r.graph, "rechunk-scratch-") == 1);
  CHECK(count_keys(r.graph, "rechunk-transfer-") == 1);
  CHECK(r.graph.at(Key(r.name, {2, 0})).target() == Key("x", {1, 0}));
  Result res = get(r.graph, std::vector<Key>{Key(r.name, {0, 0}), Key(r.name, {1, 0})});
  const NDArray& a = res[0].as<NDArray>();
  const NDArray& b = res[1].as<NDArray>();
  // Each new block is its region of the scratch (one allocation per region in
  // memory, so each goes with its block): exactly its size, nothing copied.
  CHECK(a.buffer().size() == a.nbytes());
  CHECK(b.buffer().size() == b.nbytes());
  CHECK(a.buffer().data() != b.buffer().data());
  CHECK(b.at<int32_t>({0, 0}) == 8);
}

TEST_CASE("shuffle: an all-to-all rechunk is one partial; rows to columns has one transfer per input block") {
  Rechunked r = build(iota({8, 8}), Chunks({{2, 2, 2, 2}, {8}}), Chunks({{8}, {2, 2, 2, 2}}),
                      {.method = RechunkMethod::shuffle, .disk = false});
  CHECK(count_keys(r.graph, "rechunk-barrier-") == 1);
  CHECK(count_keys(r.graph, "rechunk-transfer-") == 4);
  const Task& barrier = r.graph.at(r.graph.keys()[4 + 1 + 4]).task();  // inputs, scratch, transfers
  CHECK(barrier.function_name() == "process-local:rechunk_barrier");
  CHECK(barrier.dependencies().size() == 5);
}

TEST_CASE("shuffle: no scratch file is left after a run, or after a failing task") {
  TempDir scratch;
  const RechunkOptions options{.method = RechunkMethod::shuffle, .scratch_dir = scratch.path.string()};
  const NDArray data = iota({8, 8});
  CHECK(array_equal(run(data, Chunks({std::vector<int64_t>(8, 1), {8}}), Chunks({{8}, std::vector<int64_t>(8, 1)}),
                        options),
                    data));
  CHECK(scratch.entries() == 0);

  Rechunked r = build(data, Chunks({std::vector<int64_t>(8, 1), {8}}), Chunks({{8}, std::vector<int64_t>(8, 1)}),
                      options);
  r.graph.task(Key("x", {5, 0}), fn("read_block", []() -> NDArray { throw std::runtime_error("block 5 is unreadable"); }));
  std::vector<Key> keys;
  for (int64_t j = 0; j < 8; ++j) keys.emplace_back(r.name, std::initializer_list<int64_t>{0, j});
  REQUIRE_THROWS_WITH_AS(get(r.graph, keys, {.num_workers = 2}), doctest::Contains("block 5 is unreadable"), TaskError);
  CHECK(scratch.entries() == 0);
}

TEST_CASE("shuffle: a scratch directory that cannot be written fails the run with its path") {
  const std::string missing = "/nonexistent-tessera-dir";
  Rechunked r = build(iota({4, 4}), Chunks({{1, 1, 1, 1}, {4}}), Chunks({{4}, {1, 1, 1, 1}}),
                      {.method = RechunkMethod::shuffle, .scratch_dir = missing});
  REQUIRE_THROWS_WITH_AS(get(r.graph, Key(r.name, {0, 0})),
                         doctest::Contains((missing + "/tessera-rechunk-XXXXXX: cannot create a rechunk scratch file: No such file or directory").c_str()),
                         TaskError);
}

TEST_CASE("plan_steps: automatic picks shuffle for all-to-all graphs and tasks otherwise") {
  // Rows of 64 to columns of 16: each shard writes 64 x 16 x 8 contiguous bytes.
  const ad::StepInput wide{"x", Chunks({std::vector<int64_t>(32, 64), {512}}), DType::float64()};
  auto steps = ad::plan_steps(wide, Chunks({{2048}, std::vector<int64_t>(32, 16)}), {});
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].method == RechunkMethod::shuffle);
  // The same all-to-all with 4 x 4 shards (128-byte runs, a page shared by 32
  // shards) goes by tasks, as does a shuffle kept in memory only when asked.
  const ad::StepInput rows{"x", Chunks({std::vector<int64_t>(32, 4), {128}}), DType::float64()};
  steps = ad::plan_steps(rows, Chunks({{128}, std::vector<int64_t>(32, 4)}), {});
  CHECK(steps.back().method == RechunkMethod::tasks);
  steps = ad::plan_steps(rows, Chunks({{128}, std::vector<int64_t>(32, 4)}), {.disk = false});
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].method == RechunkMethod::shuffle);
  steps = ad::plan_steps(rows, Chunks({std::vector<int64_t>(16, 8), {128}}), {});
  REQUIRE(steps.size() == 1);
  CHECK(steps[0].method == RechunkMethod::tasks);
}

// The 2-D FFT's spectrum (complex64, 32 MiB blocks of 256 rows) to blocks of
// 256 whole columns under a 256 MiB task limit: no intermediate block passes a
// quarter of it (a block made from pieces is held twice), and of the bounds
// tried the plan with the fewest steps wins: 3 steps with 32 MiB blocks, not
// the 4 that 64 MiB gives (dask's planner at a 128 MiB block_size_limit: 3
// steps through 128 MiB blocks, whose merges needed all of the 256 MiB).
TEST_CASE("plan_steps: under a fused_task_limit, intermediate blocks of at most a quarter of it, fewest steps") {
  std::vector<int64_t> columns(64, 256);
  columns.push_back(1);
  const ad::StepInput spectrum{"x", Chunks({std::vector<int64_t>(64, 256), {16385}}), DType::complex64()};
  const Chunks target({{16384}, columns});
  RechunkOptions options{.method = RechunkMethod::tasks, .block_size_limit = 134225920};
  const int64_t limit = int64_t{256} << 20;
  const auto largest_intermediate = [&](const std::vector<ad::PlannedStep>& steps) {
    int64_t largest = 0;
    for (size_t k = 0; k + 1 < steps.size(); ++k) {
      largest = std::max(largest, largest_block_size(steps[k].chunks.sizes()) * 8);
    }
    return largest;
  };
  const std::vector<ad::PlannedStep> free = ad::plan_steps(spectrum, target, options);
  CHECK(largest_intermediate(free) > limit / 2);
  options.fused_task_limit = limit;
  const std::vector<ad::PlannedStep> bounded = ad::plan_steps(spectrum, target, options);
  REQUIRE(bounded.size() == 3);
  CHECK(bounded.back().chunks == target);
  CHECK(largest_intermediate(bounded) <= limit / 4);
}
