// Tests of the per-axis rechunk maps, their n-D product, partials and planning.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "array/rechunk/blocks.hpp"
#include "array/rechunk/test_util.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using tessera::array::testing::random_chunking;
using tessera::array::testing::random_case;

namespace {

std::vector<int64_t> blocks_of(const std::vector<Piece>& pieces) {
  std::vector<int64_t> b;
  for (const Piece& p : pieces) b.push_back(p.block);
  return b;
}

std::vector<std::vector<int64_t>> feeding_blocks(const std::vector<AxisMap>& maps, std::vector<int64_t> out) {
  std::vector<std::vector<int64_t>> fed;
  for_each_intersection(maps, out, [&](const Intersection& x) {
    fed.emplace_back(x.input_block.begin(), x.input_block.end());
  });
  return fed;
}

}  // namespace

//   input   |--0--|--1--|--2--|
//   output  |-A-|-B-|--C--|-D-|
TEST_CASE("1-D: block 0 feeds A and B, 1 feeds B and C, 2 feeds C and D") {
  AxisMap m = old_to_new_axis(std::vector<int64_t>{5, 5, 5}, std::vector<int64_t>{3, 4, 5, 3});
  REQUIRE(m.size() == 4);
  CHECK(blocks_of(m[0]) == std::vector<int64_t>{0});
  CHECK(blocks_of(m[1]) == std::vector<int64_t>{0, 1});
  CHECK(blocks_of(m[2]) == std::vector<int64_t>{1, 2});
  CHECK(blocks_of(m[3]) == std::vector<int64_t>{2});
  CHECK(m[1] == std::vector<Piece>{{0, 3, 5, 0}, {1, 0, 2, 2}});
  CHECK(m[2] == std::vector<Piece>{{1, 2, 5, 0}, {2, 0, 2, 3}});
  CHECK(new_from_old_axis(m, 3) == std::vector<std::vector<int64_t>>{{0, 1}, {1, 2}, {2, 3}});
}

//   axis 0 as in the 1-D example; axis 1: input |--α--|--β--|, output |Σ|Τ|--Υ--|
//   output block (B, Σ) is fed by input blocks (0, α) and (1, α)
TEST_CASE("2-D: output block (B, Σ) is fed by the input blocks (0, α) and (1, α)") {
  ChunkSizes old_chunks{{5, 5, 5}, {4, 4}};
  ChunkSizes new_chunks{{3, 4, 5, 3}, {2, 2, 4}};
  auto maps = old_to_new(old_chunks, new_chunks);
  CHECK(feeding_blocks(maps, {1, 0}) == std::vector<std::vector<int64_t>>{{0, 0}, {1, 0}});
  CHECK(feeding_blocks(maps, {2, 2}) == std::vector<std::vector<int64_t>>{{1, 1}, {2, 1}});
  CHECK(feeding_blocks(maps, {0, 1}) == std::vector<std::vector<int64_t>>{{0, 0}});

  std::vector<Intersection> pieces;
  for_each_intersection(maps, std::vector<int64_t>{1, 1}, [&](const Intersection& x) { pieces.push_back(x); });
  REQUIRE(pieces.size() == 2);
  CHECK(pieces[1].input_start == Intersection::Index{0, 2});
  CHECK(pieces[1].output_start == Intersection::Index{2, 0});
  CHECK(pieces[1].shape == Intersection::Index{2, 2});
  CHECK(pieces[1].position == Intersection::Index{1, 0});
  CHECK(piece_grid(maps, std::vector<int64_t>{1, 1}) == Intersection::Index{2, 1});
}

TEST_CASE("dask's old_to_new example: (10,)*5 to (25, 5, 20)") {
  AxisMap m = old_to_new_axis(std::vector<int64_t>{10, 10, 10, 10, 10}, std::vector<int64_t>{25, 5, 20});
  CHECK(m[0] == std::vector<Piece>{{0, 0, 10, 0}, {1, 0, 10, 10}, {2, 0, 5, 20}});
  CHECK(m[1] == std::vector<Piece>{{2, 5, 10, 0}});
  CHECK(m[2] == std::vector<Piece>{{3, 0, 10, 0}, {4, 0, 10, 10}});
}

TEST_CASE("zero-size blocks: empty outputs read an empty slice, empty inputs feed nothing") {
  AxisMap m = old_to_new_axis(std::vector<int64_t>{3, 0, 2}, std::vector<int64_t>{0, 5, 0});
  CHECK(m[0] == std::vector<Piece>{{0, 0, 0, 0}});
  CHECK(m[1] == std::vector<Piece>{{0, 0, 3, 0}, {2, 0, 2, 3}});
  CHECK(m[2] == std::vector<Piece>{{2, 2, 2, 0}});
  AxisMap empty = old_to_new_axis(std::vector<int64_t>{0}, std::vector<int64_t>{0, 0});
  CHECK(empty[1] == std::vector<Piece>{{0, 0, 0, 0}});
}

TEST_CASE("a 0-d rechunk has one output block made of one piece") {
  int visits = 0;
  for_each_intersection({}, {}, [&](const Intersection& x) {
    CHECK(x.shape.empty());
    ++visits;
  });
  CHECK(visits == 1);
}

TEST_CASE("bad chunkings are refused with what was expected and found") {
  using V = std::vector<int64_t>;
  REQUIRE_THROWS_WITH_AS(old_to_new_axis(V{5, 5}, V{4, 4}),
                         "rechunk: the output chunks (4, 4) add up to 8, expected the axis length 10 of the "
                         "input chunks (5, 5)",
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(old_to_new_axis(V{5, -1}, V{4}), "rechunk: expected block sizes >= 0 in the input chunks, found (5, -1)",
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(old_to_new_axis(V{5}, V{}),
                         "rechunk: expected at least one block per axis in the output chunks, found none", ChunkError);
  REQUIRE_THROWS_WITH_AS(old_to_new(ChunkSizes{{5}, {5}}, ChunkSizes{{5}}),
                         "rechunk: expected output chunks for 2 axes, found 1", ChunkError);
  REQUIRE_THROWS_WITH_AS(old_to_new(ChunkSizes{{5}, {5}}, ChunkSizes{{5}, {6}}),
                         "axis 1: rechunk: the output chunks (6,) add up to 6, expected the axis length 5 of the "
                         "input chunks (5,)",
                         ChunkError);
  auto maps = old_to_new(ChunkSizes{{5}, {5}}, ChunkSizes{{5}, {5}});
  REQUIRE_THROWS_WITH_AS(for_each_intersection(maps, std::vector<int64_t>{0}, [](const Intersection&) {}),
                         "rechunk: expected an output block index of 2 axes, found 1", ChunkError);
  REQUIRE_THROWS_WITH_AS(plan_rechunk(ChunkSizes{{5}}, ChunkSizes{{5}}, 0, {}),
                         "plan_rechunk: expected an item size of at least 1 byte, found 0", ChunkError);
}

// Paints every element of every output block from the input blocks through
// the pieces, and checks each element lands once, in its place.
TEST_CASE("property: the pieces of every output block tile it exactly (1 to 4 axes)") {
  std::mt19937_64 rng(20261130);
  for (int trial = 0; trial < 300; ++trial) {
    ChunkSizes old_chunks, new_chunks;
    std::tie(old_chunks, new_chunks) = random_case(rng, /*allow_empty=*/true);
    auto maps = old_to_new(old_chunks, new_chunks);
    const size_t ndim = old_chunks.size();
    std::vector<std::vector<int64_t>> old_offsets(ndim), new_offsets(ndim);
    for (size_t a = 0; a < ndim; ++a) {
      old_offsets[a].assign(1, 0);
      for (int64_t s : old_chunks[a]) old_offsets[a].push_back(old_offsets[a].back() + s);
      new_offsets[a].assign(1, 0);
      for (int64_t s : new_chunks[a]) new_offsets[a].push_back(new_offsets[a].back() + s);
    }
    int64_t pieces = 0;
    std::vector<int64_t> out(ndim, 0);
    tessera::array::for_each_index(testing::grid_of(new_chunks), [&](std::span<const int64_t> out_block) {
      std::vector<int64_t> shape(ndim);
      for (size_t a = 0; a < ndim; ++a) shape[a] = new_chunks[a][out_block[a]];
      std::vector<int> hits(static_cast<size_t>(testing::product(shape)), 0);
      for_each_intersection(maps, out_block, [&](const Intersection& x) {
        ++pieces;
        std::vector<int64_t> extent(x.shape.begin(), x.shape.end());
        tessera::array::for_each_index(extent, [&](std::span<const int64_t> e) {
          int64_t flat = 0;
          for (size_t a = 0; a < ndim; ++a) {
            const int64_t in_local = x.input_start[a] + e[a];
            REQUIRE(in_local < old_chunks[a][x.input_block[a]]);
            const int64_t global = old_offsets[a][x.input_block[a]] + in_local;
            const int64_t out_local = x.output_start[a] + e[a];
            REQUIRE(global == new_offsets[a][out_block[a]] + out_local);
            flat = flat * shape[a] + out_local;
          }
          ++hits[static_cast<size_t>(flat)];
        });
      });
      CHECK(std::all_of(hits.begin(), hits.end(), [](int h) { return h == 1; }));
    });
    // The count, found without the maps: along an axis an output block of size 0
    // reads one empty piece and any other block one piece per nonempty input block
    // it overlaps; an output block's pieces are the product of its axes' counts.
    int64_t expected = 1;
    for (size_t a = 0; a < ndim; ++a) {
      int64_t along = 0;
      for (size_t j = 0; j < new_chunks[a].size(); ++j) {
        if (new_chunks[a][j] == 0) {
          ++along;
          continue;
        }
        for (size_t i = 0; i < old_chunks[a].size(); ++i) {
          along += std::max(old_offsets[a][i], new_offsets[a][j]) < std::min(old_offsets[a][i + 1], new_offsets[a][j + 1]);
        }
      }
      expected *= along;
    }
    CHECK(pieces == expected);
    if (largest_block_size(new_chunks) > 0 && largest_block_size(old_chunks) > 0) {
      // Empty arrays visit an empty piece per output block; otherwise the count is exact.
      int64_t nonempty = 0;
      tessera::array::for_each_index(testing::grid_of(new_chunks), [&](std::span<const int64_t> b) {
        for_each_intersection(maps, b, [&](const Intersection&) { ++nonempty; });
      });
      CHECK(nonempty == count_intersections(maps));
    }
  }
}

TEST_CASE("partials: consecutive output blocks share one only when they end in the same input block") {
  // The 1-D example: A ends in 0, B in 1, C and D in 2.
  AxisMap m = old_to_new_axis(std::vector<int64_t>{5, 5, 5}, std::vector<int64_t>{3, 4, 5, 3});
  CHECK(partials_axis(m) == std::vector<AxisPartial>{{0, 1, 0, 1}, {0, 2, 1, 2}, {1, 3, 2, 4}});
  // Many small outputs in one input block form one partial.
  AxisMap split = old_to_new_axis(std::vector<int64_t>{6, 6}, std::vector<int64_t>{2, 2, 2, 3, 3});
  CHECK(partials_axis(split) == std::vector<AxisPartial>{{0, 1, 0, 3}, {1, 2, 3, 5}});
  // An all-to-one axis is one partial.
  AxisMap merge = old_to_new_axis(std::vector<int64_t>{2, 2, 2}, std::vector<int64_t>{6});
  CHECK(partials_axis(merge) == std::vector<AxisPartial>{{0, 3, 0, 1}});

  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    auto old_axis = random_chunking(rng, std::uniform_int_distribution<int64_t>(1, 40)(rng), false);
    int64_t length = 0;
    for (int64_t s : old_axis) length += s;
    auto new_axis = random_chunking(rng, length, false);
    AxisMap map = old_to_new_axis(old_axis, new_axis);
    auto parts = partials_axis(map);
    int64_t expected_begin = 0;
    for (size_t p = 0; p < parts.size(); ++p) {
      CHECK(parts[p].new_begin == expected_begin);
      expected_begin = parts[p].new_end;
      for (int64_t j = parts[p].new_begin; j < parts[p].new_end; ++j) {
        CHECK(map[j].front().block >= parts[p].old_begin);
        CHECK(map[j].back().block < parts[p].old_end);
        if (j > parts[p].new_begin) CHECK(map[j].back().block == map[j - 1].back().block);
      }
      if (p > 0) CHECK(map[parts[p].new_begin].back().block != map[parts[p].new_begin - 1].back().block);
    }
    CHECK(expected_begin == static_cast<int64_t>(new_axis.size()));
  }
}
