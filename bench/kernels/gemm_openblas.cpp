// The reference for bench/kernels/run.sh's matmul rows: OpenBLAS's dgemm (and
// sgemm) over the whole (n, n) arrays on THREADS threads, the limit tessera's
// dispatched GEMM is held to. This program alone links OpenBLAS (a bench peer;
// the library never does), and does not link tessera.
//
// Usage: bench_gemm_openblas SCALE REPEATS THREADS
//        bench_gemm_openblas core      (prints the kernel OpenBLAS chose, and exits)
// Prints, per precision: matmul openblas_dgemm threads=2 best=... median=... check=... core=...
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include <cblas.h>

extern "C" char* openblas_get_corename(void);
extern "C" void openblas_set_num_threads(int);

namespace {

// The formula bench_algebra and the dask peer fill their inputs with.
template <class T>
std::vector<T> formula(long n) {
  std::vector<T> a(static_cast<size_t>(n * n));
  for (long i = 0; i < n; ++i) {
    for (long j = 0; j < n; ++j)
      a[i * n + j] = static_cast<T>(static_cast<double>((i * 7919 + j * 104729) % 1009) / 1009.0);
  }
  return a;
}

template <class T, class Gemm>
void measure(const char* name, long n, int repeats, int threads, Gemm gemm) {
  const std::vector<T> a = formula<T>(n), b = a;
  std::vector<T> c(a.size());
  std::vector<double> times;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    gemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, n, n, n, T(1), a.data(), n, b.data(), n, T(0), c.data(), n);
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  double check = 0;
  for (T x : c) check += x;
  std::sort(times.begin(), times.end());
  std::printf("%s openblas threads=%d best=%.4f median=%.4f check=%.10e core=%s\n", name, threads, times.front(),
              times[times.size() / 2], check, openblas_get_corename());
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc == 2 && std::string(argv[1]) == "core") {
    std::printf("%s\n", openblas_get_corename());
    return 0;
  }
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SCALE REPEATS THREADS\n", argv[0]);
    return 2;
  }
  const long n = 8192 / std::atol(argv[1]);
  const int repeats = std::atoi(argv[2]), threads = std::atoi(argv[3]);
  openblas_set_num_threads(threads);
  measure<double>("matmul", n, repeats, threads, cblas_dgemm);
  measure<float>("matmul_f32", n, repeats, threads, cblas_sgemm);
  return 0;
}
