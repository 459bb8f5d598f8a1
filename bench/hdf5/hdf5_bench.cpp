// tessera's side of scripts/bench hdf5: one task per run, the process's peak RSS
// taken by the caller (bench/peers/hdf5_peer.py measure).
// Usage:
//   bench_hdf5 sum FILE DATASET WORKERS           prints the sum (a)
//   bench_hdf5 norm FILE DATASET OUT.h5 WORKERS   (x - x.mean(0)) / x.std(0) into OUT.h5:/x, gzip 4 + shuffle (c)
// (b) is `tessera rechunk FILE.h5:/x out.zarr`, the command a user runs.
#include <cstdio>
#include <cstdlib>
#include <string>

#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/store.hpp"

namespace ta = tessera::array;

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (!((mode == "sum" && argc == 5) || (mode == "norm" && argc == 6))) {
    std::fprintf(stderr, "usage: %s sum FILE DATASET WORKERS | norm FILE DATASET OUT.h5 WORKERS\n", argv[0]);
    return 2;
  }
  const ta::Array x = ta::from_hdf5(argv[2], argv[3]);
  const int workers = std::atoi(argv[argc - 1]);
  if (mode == "sum") {
    const double total = ta::sum(x).compute({.num_workers = workers}).astype(ta::DType::float64()).at<double>({});
    std::printf("%.6e\n", total);
    return 0;
  }
  // Two passes, as a user with more data than memory writes it: the statistics, then the result.
  const ta::NDArray mean = ta::mean(x, {.axis = {0}}).compute({.num_workers = workers});
  const ta::NDArray stdev = ta::std(x, {.axis = {0}}).compute({.num_workers = workers});
  const ta::Array y = (x - ta::from_ndarray(mean)) / ta::from_ndarray(stdev);
  ta::store(y, std::string(argv[4]) + ":/x",
            {.overwrite = true, .compute = {.num_workers = workers}, .hdf5 = {.codec = "gzip:4", .shuffle = true}});
  return 0;
}
