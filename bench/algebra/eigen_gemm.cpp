// The baseline of bench/algebra/run.sh's matmul row: one Eigen GEMM over the
// whole (n, n) float64 arrays, on as many threads as Eigen is given. This
// program alone is built with OpenMP (Eigen parallelizes its GEMM only through
// OpenMP), and it does not link tessera: tessera's own Eigen code is built
// without OpenMP, and two builds of the same Eigen templates in one program
// would be one ODR violation away from swapping each other's kernels.
//
// Usage: bench_algebra_eigen SCALE REPEATS THREADS
// Prints: matmul eigen threads=2 best=... median=... check=...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include <Eigen/Core>

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SCALE REPEATS THREADS\n", argv[0]);
    return 2;
  }
  const Eigen::Index n = 8192 / std::atoll(argv[1]);
  const int repeats = std::atoi(argv[2]);
  Eigen::setNbThreads(std::atoi(argv[3]));
  using Matrix = Eigen::Matrix<double, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  // The formula algebra_bench.cpp and the dask peer fill their inputs with.
  Matrix a(n, n);
  for (Eigen::Index i = 0; i < n; ++i) {
    for (Eigen::Index j = 0; j < n; ++j) a(i, j) = static_cast<double>((i * 7919 + j * 104729) % 1009) / 1009.0;
  }
  const Matrix b = a;
  Matrix c(n, n);
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    c.noalias() = a * b;
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  std::sort(times.begin(), times.end());
  std::printf("matmul eigen threads=%d best=%.4f median=%.4f check=%.10e\n", Eigen::nbThreads(), times.front(),
              times[times.size() / 2], c.sum());
  return 0;
}
