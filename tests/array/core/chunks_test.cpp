#include <doctest/doctest.h>

#include "tessera/array/core/chunks.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using Sizes = std::vector<std::vector<int64_t>>;

TEST_CASE("chunks answer sizes, block counts, offsets and which block holds an index") {
  Chunks c(Sizes{{4, 4, 2}, {6}});
  CHECK(c.ndim() == 2);
  CHECK(c[0] == std::vector<int64_t>{4, 4, 2});
  CHECK(c.shape() == Shape{10, 6});
  CHECK(c.numblocks() == std::vector<int64_t>{3, 1});
  CHECK(c.total_blocks() == 3);
  CHECK(c.offsets(0) == std::vector<int64_t>{0, 4, 8, 10});
  CHECK(c.block_offset({2, 0}) == Shape{8, 0});
  CHECK(c.block_shape({2, 0}) == Shape{2, 6});
  CHECK(c.max_block_shape() == Shape{4, 6});
  CHECK(c.block_of(0, 0) == 0);
  CHECK(c.block_of(0, 7) == 1);
  CHECK(c.block_of(0, 8) == 2);
  CHECK(c.block_of(0, 9) == 2);
  CHECK(c.str() == "((4, 4, 2), (6,))");
  CHECK(Chunks(Sizes{{5}}).str() == "((5,),)");
  CHECK(Chunks().total_blocks() == 1);
  REQUIRE_THROWS_WITH_AS(c.block_of(0, 10), "index 10 is outside axis 0 of length 10", ChunkError);
  REQUIRE_THROWS_WITH_AS(c.block_shape({3, 0}), doctest::Contains("the axis has 3 blocks"), ChunkError);
  REQUIRE_THROWS_WITH_AS(c.block_shape({0}), "block index has 1 entries, expected 2", ChunkError);
}

TEST_CASE("chunks built from sizes refuse empty axes, negative and zero sizes") {
  REQUIRE_THROWS_WITH_AS(Chunks(Sizes{{}}), "chunks of axis 0: expected block sizes, found none", ChunkError);
  REQUIRE_THROWS_WITH_AS(Chunks(Sizes{{2}, {3, -1}}), doctest::Contains("axis 1: expected positive block sizes"),
                         ChunkError);
  REQUIRE_THROWS_AS(Chunks(Sizes{{2, 0}}), ChunkError);
  CHECK(Chunks(Sizes{{0}}).shape() == Shape{0});
}

TEST_CASE("normalize_chunks: one size for all axes, per axis, -1 and none") {
  CHECK(normalize_chunks(4, {10, 6}) == Chunks(Sizes{{4, 4, 2}, {4, 2}}));
  CHECK(normalize_chunks({4, -1}, {10, 6}) == Chunks(Sizes{{4, 4, 2}, {6}}));
  CHECK(normalize_chunks({std::nullopt, 3}, {10, 6}) == Chunks(Sizes{{10}, {3, 3}}));
  CHECK(normalize_chunks(-1, {10, 6}) == Chunks(Sizes{{10}, {6}}));
  CHECK(normalize_chunks(100, {10}) == Chunks(Sizes{{10}}));  // larger than the axis: one block
  CHECK(normalize_chunks(5, {0, 3}) == Chunks(Sizes{{0}, {3}}));
  CHECK(normalize_chunks(5, {}) == Chunks());
}

TEST_CASE("normalize_chunks: explicit sizes, mixed with sizes, and already-made chunks") {
  CHECK(normalize_chunks({{5, 5}, {3, 1}}, {10, 4}) == Chunks(Sizes{{5, 5}, {3, 1}}));
  CHECK(normalize_chunks({{2, 8}, 2}, {10, 4}) == Chunks(Sizes{{2, 8}, {2, 2}}));
  CHECK(normalize_chunks({{7}}, {7}) == Chunks(Sizes{{7}}));
  CHECK(normalize_chunks(Sizes{{1, 2}, {4}}, {3, 4}) == Chunks(Sizes{{1, 2}, {4}}));
  Chunks c(Sizes{{1, 2}, {4}});
  CHECK(normalize_chunks(c, {3, 4}) == c);
}

TEST_CASE("normalize_chunks: a map from axis to spec, other axes whole") {
  CHECK(normalize_chunks(std::map<size_t, AxisChunks>{{1, 10}}, {4, 25}) == Chunks(Sizes{{4}, {10, 10, 5}}));
  CHECK(normalize_chunks(std::map<size_t, AxisChunks>{{0, {1, 3}}, {1, -1}}, {4, 25}) ==
        Chunks(Sizes{{1, 3}, {25}}));
  REQUIRE_THROWS_WITH_AS(normalize_chunks(std::map<size_t, AxisChunks>{{2, 1}}, {4, 25}),
                         "chunks: axis 2 named, but the array of shape (4, 25) has 2 axes", ChunkError);
}

TEST_CASE("normalize_chunks: auto under a byte limit") {
  // 1 MiB of float64 = 131072 elements; two auto axes -> sqrt = 362 per axis.
  Chunks c = normalize_chunks("auto", {1000, 1000}, DType::float64(), 1 << 20);
  CHECK(c[0][0] == 362);
  CHECK(c[1][0] == 362);
  CHECK(c.shape() == Shape{1000, 1000});
  // A short axis is taken whole and the room goes to the other: 131072 / 10 = 13107.
  c = normalize_chunks("auto", {10, 100000}, DType::float64(), 1 << 20);
  CHECK(c[0] == std::vector<int64_t>{10});
  CHECK(c[1][0] == 13107);
  // Fixed axes count with their largest block: 131072 / 64 = 2048.
  c = normalize_chunks({64, "auto"}, {128, 10000}, DType::float64(), 1 << 20);
  CHECK(c[0] == std::vector<int64_t>{64, 64});
  CHECK(c[1][0] == 2048);
  // A byte size as the spec is auto with that limit; every block fits it.
  c = normalize_chunks("64 KiB", {1000, 1000}, DType::int32());
  CHECK(c[0][0] * c[1][0] * 4 <= 65536);
  CHECK(c[0][0] == 128);
  // The default limit is 128 MiB.
  c = normalize_chunks("auto", {100000, 100000}, DType::float64());
  CHECK(c[0][0] == 4096);
  CHECK(c[1][0] == 4096);
  // Small arrays are one block.
  CHECK(normalize_chunks("auto", {10, 20}, DType::float64()) == Chunks(Sizes{{10}, {20}}));
}

TEST_CASE("normalize_chunks: bad specs say what was expected and what was found") {
  REQUIRE_THROWS_WITH_AS(normalize_chunks({4, 4, 4}, {10, 6}),
                         "chunks: expected one entry per axis of the array of shape (10, 6) (2 axes), found 3",
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks({{5, 5}, {3}}, {10, 4}),
                         "chunks of axis 1: (3,) add up to 3, expected the axis's length 4", ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks({std::vector<int64_t>{}, 2}, {10, 4}),
                         "chunks of axis 0: expected block sizes adding up to 10, found an empty list", ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks({0, 2}, {10, 4}),
                         "chunks of axis 0: expected a positive block size, -1 or none for the whole axis, found 0",
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks(-3, {10, 4}), doctest::Contains("found -3"), ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks({{5, -1, 6}, 2}, {10, 4}),
                         "chunks of axis 0: expected positive block sizes, found -1 in (5, -1, 6)", ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks({{10, 0}, 2}, {10, 4}), doctest::Contains("found 0 in (10, 0)"),
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks("auto", {10, 4}), doctest::Contains("needs the array's dtype"),
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks("big", {10, 4}), doctest::Contains("found \"big\""), ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks({"automatic", 2}, {10, 4}), doctest::Contains("found \"automatic\""),
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(normalize_chunks(2, {-1, 4}), doctest::Contains("negative extent"), ChunkError);
}

TEST_CASE("byte sizes parse as dask writes them") {
  CHECK(parse_bytes("128 MiB") == 128 << 20);
  CHECK(parse_bytes("1.5GB") == 1500000000);
  CHECK(parse_bytes("4096") == 4096);
  CHECK(parse_bytes("100 kB") == 100000);
  CHECK(parse_bytes("1e6 B") == 1000000);
  REQUIRE_THROWS_WITH_AS(parse_bytes("12 parsecs"), doctest::Contains("unknown unit \"parsecs\""), ChunkError);
  REQUIRE_THROWS_AS(parse_bytes("MiB"), ChunkError);
  REQUIRE_THROWS_AS(parse_bytes("-5 MB"), ChunkError);
}

TEST_CASE("for_each_index walks a grid in C order, once for no axes, never with an empty axis") {
  std::vector<std::vector<int64_t>> seen;
  const std::vector<int64_t> extents{2, 3};
  for_each_index(extents, [&](std::span<const int64_t> i) { seen.emplace_back(i.begin(), i.end()); });
  CHECK(seen == std::vector<std::vector<int64_t>>{{0, 0}, {0, 1}, {0, 2}, {1, 0}, {1, 1}, {1, 2}});
  int calls = 0;
  for_each_index(std::vector<int64_t>{}, [&](std::span<const int64_t> i) { calls += i.empty() ? 1 : 100; });
  CHECK(calls == 1);
  for_each_index(std::vector<int64_t>{3, 0, 2}, [&](std::span<const int64_t>) { ++calls; });
  CHECK(calls == 1);
}

TEST_CASE("for_each_block visits every block of chunks once, in C order of the block grid") {
  const Chunks c = normalize_chunks({4, 3}, {10, 6});  // 3 x 2 blocks
  std::vector<std::vector<int64_t>> seen;
  for_each_block(c, [&](std::span<const int64_t> b) { seen.emplace_back(b.begin(), b.end()); });
  CHECK(seen == std::vector<std::vector<int64_t>>{{0, 0}, {0, 1}, {1, 0}, {1, 1}, {2, 0}, {2, 1}});
}

TEST_CASE("regular_chunk_shape gives each axis's block size and refuses irregular chunks") {
  CHECK(regular_chunk_shape(Chunks(Sizes{{4, 4, 2}, {6}})) == Shape{4, 6});
  CHECK(regular_chunk_shape(Chunks(Sizes{{0}})) == Shape{1});
  REQUIRE_THROWS_WITH_AS(regular_chunk_shape(Chunks(Sizes{{2, 4}, {3}})),
                         "store to zarr needs regular chunks (equal blocks but a smaller last one), found ((2, 4), (3,)) "
                         "along axis 0; rechunk first",
                         tessera::ChunkError);
}
