// The sum of a float64 .npy file, mapped: tessera's from_npy + sum + compute.
// Usage: bench_array_sum FILE.npy WORKERS REPEATS [CHUNK_ROWS]
// Prints the best and median wall time, the least CPU time (user + system) of a
// run, in seconds, and the sum, one line:
//   tessera workers=2 best=0.412 median=0.420 cpu=0.610 sum=...
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/reductions.hpp"

// CPU seconds (user + system) this process has used so far.
double cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto sec = [](timeval t) { return static_cast<double>(t.tv_sec) + 1e-6 * static_cast<double>(t.tv_usec); };
  return sec(u.ru_utime) + sec(u.ru_stime);
}

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s FILE.npy WORKERS REPEATS [CHUNK]\n", argv[0]);
    return 2;
  }
  namespace ta = tessera::array;
  const std::string path = argv[1];
  const int workers = std::atoi(argv[2]), repeats = std::atoi(argv[3]);
  const tessera::array::ChunkSpec chunks = argc > 4 ? ta::ChunkSpec(static_cast<int64_t>(std::atoll(argv[4]))) : ta::ChunkSpec("auto");
  std::vector<double> times, cpu;
  double total = 0;
  for (int r = 0; r < repeats; ++r) {
    auto t0 = std::chrono::steady_clock::now();
    const double c0 = cpu_seconds();
    // Graph building is part of the measured time, as np.load's header read is.
    total = ta::sum(ta::from_npy(path, chunks)).compute<double>({.num_workers = workers});
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    cpu.push_back(cpu_seconds() - c0);
  }
  std::sort(times.begin(), times.end());
  std::printf("tessera workers=%d best=%.6f median=%.6f cpu=%.6f sum=%.17g\n", workers, times.front(),
              times[times.size() / 2], *std::min_element(cpu.begin(), cpu.end()), total);
  return 0;
}
