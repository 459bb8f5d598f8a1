// Tests of rechunk_store: a rechunk written into a new zarr store, straight
// into its chunk files (direct) or rechunked then stored (staged).
#include <doctest/doctest.h>

#include <absl/strings/str_cat.h>

#include <cstdint>
#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "array/rechunk/test_util.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using testing::iota;
using testing::TempDir;

namespace {

constexpr size_t kAlways = 0;
constexpr size_t kNever = SIZE_MAX;

// What the store at `path` holds, read back through zarr.
NDArray read_back(const std::string& path) { return from_zarr(path).compute(); }

}  // namespace

TEST_CASE("property: direct and staged writes store the input's elements in regular chunks (1 to 4 axes)") {
  std::mt19937_64 rng(1201);
  TempDir dir;
  for (int trial = 0; trial < 30; ++trial) {
    const int ndim = std::uniform_int_distribution<int>(1, 4)(rng);
    ChunkSizes old_chunks;
    std::vector<AxisChunks> target;
    Shape target_chunk;
    for (int a = 0; a < ndim; ++a) {
      const int64_t len = std::uniform_int_distribution<int64_t>(1, ndim <= 2 ? 20 : 7)(rng);
      old_chunks.push_back(testing::random_chunking(rng, len, /*allow_zero=*/false));
      target_chunk.push_back(std::uniform_int_distribution<int64_t>(1, len)(rng));  // edge chunks padded
      target.emplace_back(target_chunk.back());
    }
    const DType dtype = trial % 3 == 0 ? DType::int8() : DType::float64();
    const NDArray data = iota(Chunks(old_chunks).shape(), dtype);
    const Array x = from_ndarray(data, Chunks(old_chunks));
    for (size_t min_run : {kAlways, kNever}) {
      CAPTURE(Chunks(old_chunks).str());
      CAPTURE(min_run);
      const std::string path = absl::StrCat(dir.path.string(), "/t", trial, "-", min_run != 0, ".zarr");
      const RechunkStoreResult r = rechunk_store(x, ChunkSpec(target), path,
                                                 {.store = {.compute = {.num_workers = 2}}, .direct_min_run = min_run});
      CHECK(r.direct == (min_run == kAlways));
      CHECK(zarr::open(path).chunk_shape() == target_chunk);
      CHECK(array_equal(read_back(path), data));
    }
  }
}

TEST_CASE("rows to columns goes straight into the chunk files; short runs are staged") {
  TempDir dir;
  const NDArray data = iota({64, 8192}, DType::float64());
  const Array rows = from_ndarray(data, {8, -1});
  // Each shard is 8 x 1024 float64 spanning its chunk's width: one 64 KiB run.
  const RechunkStoreResult cols = rechunk_store(rows, {-1, 1024}, (dir.path / "cols.zarr").string());
  CHECK(cols.direct);
  CHECK(cols.chunks == Chunks({{64}, {1024, 1024, 1024, 1024, 1024, 1024, 1024, 1024}}));
  CHECK(array_equal(read_back((dir.path / "cols.zarr").string()), data));

  // Back to rows: each shard lands as 8 rows of 8 KiB.
  const Array from_cols = from_zarr((dir.path / "cols.zarr").string());
  const RechunkStoreResult back = rechunk_store(from_cols, {8, -1}, (dir.path / "rows.zarr").string());
  CHECK_FALSE(back.direct);
  CHECK(array_equal(read_back((dir.path / "rows.zarr").string()), data));

  // through_rechunk is honoured: rechunk, then store.
  const RechunkStoreResult staged = rechunk_store(rows, {-1, 1024}, (dir.path / "staged.zarr").string(),
                                                  {.method = RechunkStoreMethod::through_rechunk});
  CHECK_FALSE(staged.direct);
  CHECK(array_equal(read_back((dir.path / "staged.zarr").string()), data));
}

TEST_CASE("rechunk_store: a failing source block leaves no store; an existing target is refused") {
  TempDir dir;
  BlockMaker failing = [](std::span<const int64_t> offset, const Shape& shape) -> NDArray {
    if (offset[0] == 40) throw std::runtime_error("block 5 cannot be read");
    return NDArray::zeros(DType::float64(), shape);
  };
  const Array bad = from_blocks(failing, DType::float64(), {64, 8192}, {8, -1});
  const std::string path = (dir.path / "out.zarr").string();
  for (size_t min_run : {kAlways, kNever}) {
    CAPTURE(min_run);
    REQUIRE_THROWS_WITH_AS(rechunk_store(bad, {-1, 1024}, path,
                                         {.store = {.compute = {.num_workers = 2}}, .direct_min_run = min_run}),
                           doctest::Contains("block 5 cannot be read"), TaskError);
    CHECK(dir.entries() == 0);
  }

  const Array good = from_ndarray(iota({64, 8192}, DType::float64()), {8, -1});
  rechunk_store(good, {-1, 1024}, path);
  REQUIRE_THROWS_WITH_AS(rechunk_store(good, {-1, 2048}, path),
                         doctest::Contains("the target exists; pass overwrite to replace it"), StorageError);
  CHECK(zarr::open(path).chunk_shape() == Shape{64, 1024});
  const RechunkStoreResult r = rechunk_store(good, {-1, 2048}, path, {.store = {.overwrite = true}});
  CHECK(r.direct);
  CHECK(zarr::open(path).chunk_shape() == Shape{64, 2048});
  CHECK(dir.entries() == 1);
}

TEST_CASE("rechunk_store: irregular target chunks are refused, as store refuses them") {
  TempDir dir;
  const Array x = from_ndarray(iota({10, 10}), {5, 5});
  REQUIRE_THROWS_WITH_AS(rechunk_store(x, std::vector<std::vector<int64_t>>{{3, 7}, {10}}, (dir.path / "a.zarr").string()),
                         "store to zarr needs regular chunks (equal blocks but a smaller last one), found "
                         "((3, 7), (10,)) along axis 0; rechunk first",
                         ChunkError);
  CHECK(dir.entries() == 0);
}
