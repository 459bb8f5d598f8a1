// A long-running process that builds and computes small arrays one after
// another, as a service answering requests would: its memory must stay bounded.
// Each iteration makes fresh unique names (an array from memory, a map_blocks,
// a compute), so names kept for the life of the process would grow the heap
// by every iteration.
//
// Prints the resident set size after 10^5 and after 10^6 iterations (or after
// --first and --last) and their ratio; exits 1 when the ratio passes 1.10.
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include <tessera/array/array.hpp>
#include <tessera/array/ops/creation.hpp>
#include <tessera/array/ops/map_blocks.hpp>
#include <tessera/graph/key.hpp>

namespace ta = tessera::array;

namespace {

// Resident set size in KiB, from /proc/self/status.
long rss_kib() {
  std::ifstream in("/proc/self/status");
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("VmRSS:", 0) == 0) return std::strtol(line.c_str() + 6, nullptr, 10);
  }
  return -1;
}

double one_iteration(const ta::NDArray& data) {
  ta::Array x = ta::from_ndarray(data, {4});
  ta::Array y = ta::map_blocks<double, 1>([](auto a) { return a * 2.0; }, x);
  return y.compute().data<double>()[7];
}

}  // namespace

int main(int argc, char** argv) {
  long first = 100000, last = 1000000;
  for (int i = 1; i + 1 < argc; i += 2) {
    if (std::strcmp(argv[i], "--first") == 0) first = std::atol(argv[i + 1]);
    if (std::strcmp(argv[i], "--last") == 0) last = std::atol(argv[i + 1]);
  }
  if (first <= 0 || last < first) {
    std::fprintf(stderr, "usage: bench_leak [--first N] [--last M] with 0 < N <= M\n");
    return 2;
  }
  ta::NDArray data = ta::NDArray::from_vector(std::vector<double>{0, 1, 2, 3, 4, 5, 6, 7}, {8});
  double check = 0;
  long rss_first = 0;
  for (long i = 1; i <= last; ++i) {
    check += one_iteration(data);
    if (i == first) rss_first = rss_kib();
  }
  const long rss_last = rss_kib();
  const double ratio = static_cast<double>(rss_last) / static_cast<double>(rss_first);
  std::printf("iterations  rss_kib  interned_names\n");
  std::printf("%10ld  %7ld\n%10ld  %7ld  %zu\n", first, rss_first, last, rss_last,
              tessera::detail::interned_name_count());
  std::printf("ratio %.3f (bounded when <= 1.10)   checksum %.0f\n", ratio, check);
  return ratio <= 1.10 ? 0 : 1;
}
