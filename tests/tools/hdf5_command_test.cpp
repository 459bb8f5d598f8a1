// Tests of `tessera info` and `tessera rechunk` on HDF5 and NetCDF-4 files.
#include <doctest/doctest.h>

#include "array/support.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tools/tool_test.hpp"

using namespace tessera::array;
using tessera::array::testing::TempDir;
using tessera::tool_test::Run;
using tessera::tool_test::run_tessera;

namespace {

Array hdf5_ramp() {
  return from_function<int32_t>([](std::span<const int64_t> i) { return (i[0] * 31 + i[1]) % 100; }, {100, 60},
                                ChunkSpec({50, 30}));
}

}  // namespace

TEST_CASE("tessera info: an HDF5 file's groups and datasets, filters, dimension names") {
  TempDir dir;
  store(hdf5_ramp(), dir / "a.nc:/g/v", {.hdf5 = {.codec = "gzip:4", .shuffle = true, .dimension_names = {"y", "x"}}});
  const Run r = run_tessera("info " + dir / "a.nc");
  REQUIRE_MESSAGE(r.status == 0, r.err);
  INFO(r.out);
  CHECK(r.out.find("Type               : HDF5 file\n/ (group)\n  /g (group)\n") != std::string::npos);
  CHECK(r.out.find("    /g/v\n      Shape              : (100, 60)\n      Data type          : int32\n"
                   "      Layout             : chunked, chunks (50, 30)\n"
                   "      Filters            : shuffle(4), deflate(4) (decoded by tessera, in parallel)\n"
                   "      Fill value         : 0\n      Dimension names    : y, x\n") != std::string::npos);
  CHECK(r.out.find("    /g/x\n      NetCDF-4 dimension of length 60 (no values)\n") != std::string::npos);
  const Run one = run_tessera("info " + dir / "a.nc:/g/v");
  CHECK(one.out.find("Shape              : (100, 60)\n") == 0);
  const Run missing = run_tessera("info " + dir / "a.nc:/g/w");
  CHECK(missing.status == 2);
  CHECK(missing.err.find("no dataset /g/w in the file; it holds: /g (group), /g/v (dataset), /g/x (dataset), "
                         "/g/y (dataset)") != std::string::npos);
}

TEST_CASE("tessera rechunk: an HDF5 dataset to a zstd zarr store and back to HDF5") {
  TempDir dir;
  store(hdf5_ramp(), dir / "a.h5:/v", {.hdf5 = {.codec = "gzip:1"}});
  const Run there =
      run_tessera("rechunk --no-progress --chunks 25,-1 --codec zstd:3 " + dir / "a.h5:/v" + " " + dir / "b.zarr");
  REQUIRE_MESSAGE(there.status == 0, there.err);
  CHECK(from_zarr(dir / "b.zarr").chunks() == Chunks({{25, 25, 25, 25}, {60}}));
  const Run back =
      run_tessera("rechunk --no-progress --chunks 10,10 --codec gzip:2 " + dir / "b.zarr" + " " + dir / "c.h5:/deep/x");
  REQUIRE_MESSAGE(back.status == 0, back.err);
  const hdf5::Dataset c = hdf5::open(dir / "c.h5", "deep/x");
  CHECK(c.metadata().chunk_shape == Shape{10, 10});
  CHECK(c.metadata().filters.size() == 2);  // shuffle, deflate
  CHECK(array_equal(from_hdf5(dir / "c.h5", "/deep/x").compute(), hdf5_ramp().compute()));
  const Run refused = run_tessera("rechunk --no-progress --chunks 10,10 " + dir / "b.zarr" + " " + dir / "c.h5:/x");
  CHECK(refused.status != 0);
  CHECK(refused.err.find("exists") != std::string::npos);
}
