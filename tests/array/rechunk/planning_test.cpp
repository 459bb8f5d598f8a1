// Tests of rechunk planning: limits, thresholds, method choice, and agreement
// with dask's own planner on random cases.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <unistd.h>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "array/rechunk/test_util.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "python_peer.hpp"

using namespace tessera;
using namespace tessera::array;
using tessera::array::testing::random_case;

namespace {

ChunkSizes regular(std::vector<std::pair<int64_t, int64_t>> axes) {  // (block, count) per axis
  ChunkSizes c;
  for (auto [size, count] : axes) c.emplace_back(static_cast<size_t>(count), size);
  return c;
}

// Runs the dask peer script on `query` and returns its answer.
nlohmann::json ask_dask(const nlohmann::json& query) {
  const std::string python = python_peer::python();
  const char* root = std::getenv("TESSERA_SOURCE_ROOT");
  REQUIRE(root != nullptr);
  const auto dir = std::filesystem::temp_directory_path();
  const std::string in = (dir / ("rechunk_peer_in_" + std::to_string(::getpid()) + ".json")).string();
  const std::string out = (dir / ("rechunk_peer_out_" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(in) << query.dump();
  const std::string cmd = std::string(python) + " " + root + "/tests/array/rechunk/dask_peer.py < " + in + " > " + out;
  const int rc = std::system(cmd.c_str());
  std::filesystem::remove(in);
  REQUIRE_MESSAGE(rc == 0, "the dask peer failed: " << cmd);
  nlohmann::json answer = nlohmann::json::parse(std::ifstream(out));
  std::filesystem::remove(out);
  return answer;
}

}  // namespace

TEST_CASE("a many-to-many rechunk under a roomy limit goes through one merged intermediate") {
  // rows (256, 8192) x 64 to columns (16384, 256) x 32, float64, 128 MiB: the
  // intermediate merges rows up to 2048 (128 MiB blocks); dask plans the same.
  ChunkSizes rows = regular({{256, 64}, {8192, 1}});
  ChunkSizes cols = regular({{16384, 1}, {256, 32}});
  auto steps = plan_rechunk(rows, cols, 8, {});
  REQUIRE(steps.size() == 2);
  CHECK(steps[0] == regular({{2048, 8}, {8192, 1}}));
  CHECK(steps[1] == cols);
  CHECK(largest_block_size(steps[0]) * 8 <= kDefaultChunkBytes);
}

TEST_CASE("plans stop early: one axis, equal chunkings, small graphs, empty arrays") {
  ChunkSizes a = regular({{10, 10}});
  CHECK(plan_rechunk(a, regular({{25, 4}}), 8, {}) == std::vector<ChunkSizes>{regular({{25, 4}})});
  ChunkSizes b = regular({{10, 10}, {10, 10}});
  CHECK(plan_rechunk(b, b, 8, {}) == std::vector<ChunkSizes>{b});
  ChunkSizes c = regular({{20, 5}, {10, 10}});
  CHECK(plan_rechunk(b, c, 8, {}) == std::vector<ChunkSizes>{c});  // 50 + 100 pieces < 4 * 150
  ChunkSizes empty{{0}, {5, 5}};
  CHECK(plan_rechunk(empty, ChunkSizes{{0}, {10}}, 8, {}) == std::vector<ChunkSizes>{ChunkSizes{{0}, {10}}});
}

TEST_CASE("a tiny limit is raised to the largest input or output block") {
  ChunkSizes rows = regular({{4, 16}, {64, 1}});
  ChunkSizes cols = regular({{64, 1}, {4, 16}});
  auto steps = plan_rechunk(rows, cols, 8, {.block_size_limit = 1, .threshold = 4});
  const int64_t bound = std::max(largest_block_size(rows), largest_block_size(cols));
  for (const auto& s : steps) CHECK(largest_block_size(s) <= bound);
  CHECK(steps.back() == cols);
}

TEST_CASE("a threshold below 1 is refused") {
  REQUIRE_THROWS_WITH_AS(plan_rechunk(ChunkSizes{{5}}, ChunkSizes{{5}}, 8, {.threshold = 0.5}),
                         "plan_rechunk: expected a threshold >= 1, found 0.500000", ChunkError);
}

TEST_CASE("auto picks tasks for small graphs and shuffle for all-to-all ones, as dask does") {
  CHECK(choose_rechunk_method(regular({{10, 10}}), regular({{20, 5}})) == RechunkMethod::tasks);
  ChunkSizes rows = regular({{4, 32}, {128, 1}});
  ChunkSizes cols = regular({{128, 1}, {4, 32}});
  // 32 x 32 pieces against 4 x (32 + 32) = 256
  CHECK(count_intersections(old_to_new(rows, cols)) == 1024);
  CHECK(choose_rechunk_method(rows, cols) == RechunkMethod::shuffle);
  CHECK(choose_rechunk_method(rows, cols, 20.0) == RechunkMethod::tasks);
}

TEST_CASE("divide_to_width and merge_to_number") {
  using V = std::vector<int64_t>;
  CHECK(array::detail::divide_to_width(V{10, 3}, 4) == V{3, 3, 4, 3});
  CHECK(array::detail::divide_to_width(V{7}, 100) == V{7});
  CHECK(array::detail::merge_to_number(V{1, 2, 3, 4}, 10) == V{1, 2, 3, 4});
  CHECK(array::detail::merge_to_number(V{1, 2, 3, 4}, 2) == V{6, 4});
  CHECK(array::detail::merge_to_number(V{5, 5, 5, 5, 5}, 2) == V{15, 10});
}

TEST_CASE("property: every step fits the limit, adds up to the shape, and ends at the target") {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < 500; ++trial) {
    auto [old_chunks, new_chunks] = random_case(rng, /*allow_empty=*/true);
    const int64_t itemsize = int64_t{1} << std::uniform_int_distribution<int>(0, 3)(rng);
    const int64_t limit = std::uniform_int_distribution<int64_t>(1, 4096)(rng);
    auto steps = plan_rechunk(old_chunks, new_chunks, itemsize, {.block_size_limit = limit, .threshold = 4});
    REQUIRE(!steps.empty());
    CHECK(steps.back() == new_chunks);
    const int64_t bound =
        std::max({limit / itemsize, largest_block_size(old_chunks), largest_block_size(new_chunks)});
    for (const auto& s : steps) {
      CHECK(largest_block_size(s) <= bound);
      CHECK_NOTHROW(old_to_new(old_chunks, s));  // same shape
    }
  }
}

TEST_CASE("peer: plans, maps and helpers equal dask's on random cases" *
          python_peer::needed()) {
  std::mt19937_64 rng(5);
  nlohmann::json query = {{"plans", nlohmann::json::array()}, {"maps", nlohmann::json::array()},
                          {"divide", nlohmann::json::array()}, {"merge", nlohmann::json::array()}};
  std::vector<std::pair<ChunkSizes, ChunkSizes>> cases;
  std::vector<std::pair<int64_t, int64_t>> params;  // itemsize, limit
  for (int trial = 0; trial < 300; ++trial) {
    cases.push_back(random_case(rng, /*allow_empty=*/false));  // dask merges empty blocks its own way
    params.emplace_back(int64_t{1} << std::uniform_int_distribution<int>(0, 3)(rng),
                        std::uniform_int_distribution<int64_t>(1, 2048)(rng));
    query["plans"].push_back({cases.back().first, cases.back().second, params.back().first, params.back().second, 4});
    query["maps"].push_back({cases.back().first, cases.back().second});
  }
  std::vector<std::pair<std::vector<int64_t>, int64_t>> sizes;
  for (int trial = 0; trial < 300; ++trial) {
    auto s = testing::random_chunking(rng, std::uniform_int_distribution<int64_t>(1, 60)(rng), false);
    sizes.emplace_back(s, std::uniform_int_distribution<int64_t>(1, static_cast<int64_t>(s.size()) + 2)(rng));
    query["divide"].push_back({s, sizes.back().second});
    query["merge"].push_back({s, sizes.back().second});
  }
  nlohmann::json answer = ask_dask(query);
  for (size_t i = 0; i < cases.size(); ++i) {
    const auto& o = cases[i].first;
    const auto& n = cases[i].second;
    auto ours = plan_rechunk(o, n, params[i].first, {.block_size_limit = params[i].second, .threshold = 4});
    CHECK_MESSAGE(nlohmann::json(ours) == answer["plans"][i], "case ", nlohmann::json({o, n}).dump(),
                  " itemsize ", params[i].first, " limit ", params[i].second);
    nlohmann::json maps = nlohmann::json::array();
    for (const AxisMap& axis : old_to_new(o, n)) {
      nlohmann::json a = nlohmann::json::array();
      for (const auto& block : axis) {
        nlohmann::json b = nlohmann::json::array();
        for (const Piece& p : block) b.push_back({p.block, p.start, p.stop});
        a.push_back(b);
      }
      maps.push_back(a);
    }
    CHECK(maps == answer["maps"][i]);
  }
  for (size_t i = 0; i < sizes.size(); ++i) {
    CHECK(nlohmann::json(array::detail::divide_to_width(sizes[i].first, sizes[i].second)) == answer["divide"][i]);
    CHECK(nlohmann::json(array::detail::merge_to_number(sizes[i].first, sizes[i].second)) == answer["merge"][i]);
  }
}

TEST_CASE("a shard's mean contiguous run: rows to columns writes whole column rows, cubes to slices short rows") {
  // (4, 128) rows to (128, 4) columns: a shard is 4 rows x 4 columns of a
  // column block 4 wide, so its rows follow each other: 4 x 4 x 8 bytes.
  CHECK(mean_shard_run_bytes(regular({{4, 32}, {128, 1}}), regular({{128, 1}, {4, 32}}), 8) == 128);
  // 32^3 cubes to (1, 512, 1024) slices: 32 elements of a 1024-element row.
  CHECK(mean_shard_run_bytes(regular({{32, 4}, {32, 16}, {32, 32}}), regular({{1, 128}, {512, 1}, {1024, 1}}), 2) ==
        64);
  // Rows to rows (no axis split): the whole block.
  CHECK(mean_shard_run_bytes(regular({{10, 10}}), regular({{20, 5}}), 4) == 40);
}

TEST_CASE("rechunk's automatic choice takes tasks over the disk shuffle when shards are shorter than a page") {
  // Both are all-to-all by dask's rule. 32^3 cubes to whole slices write
  // 64-byte runs: tasks. Rows to 16-wide columns write 43 KiB runs: shuffle.
  const Array cubes = zeros({128, 512, 1024}, {32, 32, 32}, DType::int16());
  CHECK(rechunk(cubes, {1, 512, 1024}).name().rfind("rechunk-merge-", 0) == 0);
  const Array rows = zeros({32768, 4096}, {341, 4096});
  CHECK(rechunk(rows, {32768, 16}).name().rfind("rechunk-shuffle-", 0) == 0);
}
