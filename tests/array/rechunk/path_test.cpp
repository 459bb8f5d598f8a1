// Tests of rechunk_path: the work of `tessera rechunk` (and Python's tessera.rechunk) by path.
#include <doctest/doctest.h>

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <string>

#include "array/rechunk/store_files.hpp"
#include "array/rechunk/test_util.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/rechunk_path.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using testing::iota;
using testing::names_in;
using testing::TempDir;

TEST_CASE("rechunk_path: a .npy file in blocks of rows under the block limit, into zarr columns") {
  TempDir dir;
  const NDArray data = iota({40, 30}, DType::float64());
  const std::string src = (dir.path / "a.npy").string();
  store(from_ndarray(data, Chunks({{40}, {30}})), src);
  CHECK(open_rechunk_source(src, {.block_limit = 30 * 8 * 4}).array.chunks().max_block_shape() == Shape{4, 30});
  // One row at least.
  CHECK(open_rechunk_source(src, {.block_limit = 1}).array.chunks().max_block_shape() == Shape{1, 30});
  const std::string dst = (dir.path / "b.zarr").string();
  const RechunkStoreResult r = rechunk_path(src, dst, {-1, 7}, {.max_mem = 1 << 20, .num_workers = 2});
  CHECK(zarr::open(dst).chunk_shape() == Shape{40, 7});
  CHECK(r.chunks.max_block_shape() == Shape{40, 7});
  CHECK(array_equal(from_zarr(dst).compute(), data));
}

TEST_CASE("rechunk_path: refusals write nothing and name what was expected") {
  TempDir dir;
  const std::string src = (dir.path / "a.npy").string();
  store(from_ndarray(iota({40, 30}, DType::float64()), Chunks({{40}, {30}})), src);
  const std::string dst = (dir.path / "b.zarr").string();
  const auto before = names_in(dir.path);
  CHECK_THROWS_WITH_AS(rechunk_path(src, dst, {-1, -1}, {.max_mem = 4096, .num_workers = 1}),
                       "max_mem: 4096 bytes cannot hold the blocks of chunks (40, 30) (9600 bytes each, 4 of them "
                       "with 1 workers); the smallest max_mem that works is 38400 bytes, or choose smaller chunks or "
                       "fewer num_workers",
                       BudgetError);
  CHECK_THROWS_WITH_AS(rechunk_path(src, dst, {-1, 1}, {.max_mem = 0}), "max_mem: expected a positive size, found 0",
                       ChunkError);
  CHECK_THROWS_WITH_AS(rechunk_path(src, dst, {5}), "rechunk: expected chunks for 2 axes, found 1", ChunkError);
  CHECK_THROWS_AS(rechunk_path((dir.path / "missing.zarr").string(), dst, {5}), StorageError);
  CHECK(names_in(dir.path) == before);
  // A folder of other things is not replaced, even with overwrite.
  std::filesystem::create_directory(dst);
  std::ofstream(dst + "/notes.txt") << "mine";
  CHECK_THROWS_AS(rechunk_path(src, dst, {-1, 1}), StorageError);
  CHECK_THROWS_WITH_AS(rechunk_path(src, dst, {-1, 1}, {.overwrite = true}),
                       doctest::Contains("will not replace it"), StorageError);
  CHECK(names_in(dst) == std::vector<std::string>{"notes.txt"});
}

// The checks of `tessera rechunk` (issue 25) are rechunk_path's: a store that
// declares 2^31 chunks in a few hundred bytes is refused before one task is made.
TEST_CASE("rechunk_path: a zarr.json of 2^31 chunks, too many targets, a shard index: refused, nothing written") {
  TempDir dir;
  const std::filesystem::path huge = dir.path / "huge.zarr";
  std::filesystem::create_directory(huge);
  std::ofstream(huge / "zarr.json")
      << R"({"zarr_format": 3, "node_type": "array", "shape": [16777216, 8388608], "data_type": "float64",)"
         R"( "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 256]}},)"
         R"( "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,)"
         R"( "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}]})";
  const std::string dst = (dir.path / "out.zarr").string();
  const auto before = names_in(dir.path);
  const std::string graph_refusal =
      "max_mem: 67108864 bytes cannot hold the task graph of " + huge.string() + ": its 2147483648 chunks of (256, 256)";
  CHECK_THROWS_WITH_AS(rechunk_path(huge.string(), dst, {65536, 65536}, {.max_mem = 64 << 20}),
                       doctest::Contains(graph_refusal.c_str()), BudgetError);
  const std::string src = (dir.path / "a.npy").string();
  store(from_ndarray(NDArray::full(DType::uint8(), {2048, 2048}, Scalar(1)), Chunks({{2048}, {2048}})), src);
  const auto with_npy = names_in(dir.path);
  CHECK_THROWS_WITH_AS(rechunk_path(src, dst, {2, 2}, {.max_mem = 64 << 20}),
                       doctest::Contains("to 1048576 chunks of (2, 2): about "), BudgetError);
  RechunkPathOptions sharded{.max_mem = 64 << 20, .num_workers = 1};
  sharded.format = {.zarr_format = 3, .inner_chunks = {1, 1}};
  CHECK_THROWS_WITH_AS(rechunk_path(src, dst, {1024, 1024}, sharded),
                       doctest::Contains("with its index of 1048576 inner chunks of chunks (1, 1) (50331648 bytes "
                                         "while written, 48 per inner chunk)"),
                       BudgetError);
  CHECK(names_in(dir.path) == with_npy);
  CHECK(before.size() + 1 == with_npy.size());
}
