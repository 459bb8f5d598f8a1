// FFTW 3's side of bench/kernels/run.sh's FFT rows: the transforms bench_fft
// times tessera's lane kernel on (bench/fft/fft_bench.cpp, the same names and
// shapes), planned with FFTW_MEASURE and run on one thread, best of 3. FFTW is
// GPL: a peer of the bench alone, never linked by libtessera.
//
// Usage: bench_fft_fftw
// Prints: NAME fftw=SECONDS
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <limits>

#include <fftw3.h>

namespace {

double best_of_3(const std::function<void()>& run) {
  double best = std::numeric_limits<double>::infinity();
  for (int r = 0; r < 3; ++r) {
    const auto t = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  }
  return best;
}

// howmany lines of n points, `stride` apart within a line and `dist` between lines.
struct Lines {
  int n, howmany, stride, dist;
};

template <class Real>
void fill(Real* p, long count) {
  for (long i = 0; i < count; ++i) p[i] = static_cast<Real>((i * 7919) % 1009) / Real(1009) - Real(0.5);
}

void real_rows_f32(const char* name, Lines l) {
  float* in = fftwf_alloc_real(static_cast<size_t>(l.n) * l.howmany);
  const int half = l.n / 2 + 1;
  fftwf_complex* out = fftwf_alloc_complex(static_cast<size_t>(half) * l.howmany);
  fftwf_plan p = fftwf_plan_many_dft_r2c(1, &l.n, l.howmany, in, nullptr, 1, l.n, out, nullptr, 1, half, FFTW_MEASURE);
  fill(in, static_cast<long>(l.n) * l.howmany);
  std::printf("%s fftw=%.4f\n", name, best_of_3([&] { fftwf_execute(p); }));
  fftwf_destroy_plan(p);
  fftwf_free(in);
  fftwf_free(out);
}

void real_rows_f64(const char* name, Lines l) {
  double* in = fftw_alloc_real(static_cast<size_t>(l.n) * l.howmany);
  const int half = l.n / 2 + 1;
  fftw_complex* out = fftw_alloc_complex(static_cast<size_t>(half) * l.howmany);
  fftw_plan p = fftw_plan_many_dft_r2c(1, &l.n, l.howmany, in, nullptr, 1, l.n, out, nullptr, 1, half, FFTW_MEASURE);
  fill(in, static_cast<long>(l.n) * l.howmany);
  std::printf("%s fftw=%.4f\n", name, best_of_3([&] { fftw_execute(p); }));
  fftw_destroy_plan(p);
  fftw_free(in);
  fftw_free(out);
}

void complex_c64(const char* name, Lines l, int sign) {
  const size_t count = static_cast<size_t>(l.n) * l.howmany;
  fftwf_complex* in = fftwf_alloc_complex(count);
  fftwf_complex* out = fftwf_alloc_complex(count);
  fftwf_plan p = fftwf_plan_many_dft(1, &l.n, l.howmany, in, nullptr, l.stride, l.dist, out, nullptr, l.stride, l.dist,
                                     sign, FFTW_MEASURE);
  fill(&in[0][0], 2 * static_cast<long>(count));
  std::printf("%s fftw=%.4f\n", name, best_of_3([&] { fftwf_execute(p); }));
  fftwf_destroy_plan(p);
  fftwf_free(in);
  fftwf_free(out);
}

void complex_c128(const char* name, Lines l, int sign) {
  const size_t count = static_cast<size_t>(l.n) * l.howmany;
  fftw_complex* in = fftw_alloc_complex(count);
  fftw_complex* out = fftw_alloc_complex(count);
  fftw_plan p = fftw_plan_many_dft(1, &l.n, l.howmany, in, nullptr, l.stride, l.dist, out, nullptr, l.stride, l.dist,
                                   sign, FFTW_MEASURE);
  fill(&in[0][0], 2 * static_cast<long>(count));
  std::printf("%s fftw=%.4f\n", name, best_of_3([&] { fftw_execute(p); }));
  fftw_destroy_plan(p);
  fftw_free(in);
  fftw_free(out);
}

}  // namespace

int main() {
  // bench_fft's cases: (shape, axis) -> lines of n points.
  real_rows_f32("rfft-rows-f32", {16384, 1024, 1, 16384});                  // (1024, 16384) float32, axis 1
  complex_c64("fft-cols-c64", {16384, 128, 128, 1}, FFTW_FORWARD);          // (16384, 128) complex64, axis 0
  complex_c128("fft-rows-c128", {8192, 512, 1, 8192}, FFTW_FORWARD);        // (512, 8192) complex128, axis 1
  real_rows_f64("rfft-rows-f64-3000", {3000, 1000, 1, 3000});               // (1000, 3000) float64, axis 1
  complex_c128("ifft-cols-c128-1000", {1000, 500, 500, 1}, FFTW_BACKWARD);  // (1000, 500) complex128, axis 0
  std::fflush(stdout);
  return 0;
}
