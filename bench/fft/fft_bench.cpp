// bench_fft: tessera's two FFT kernels on the same data, the lane kernel
// (fft_lanes.hpp: several lines at once in SIMD lanes, for lengths of small
// prime factors, as all these are) and Eigen's FFT module (kissfft line by line,
// the library the rest goes through), on the sizes bench/peers/fft_dask.py gives
// numpy.fft, one thread each. Prints `NAME lanes=SECONDS eigen=SECONDS auto=KERNEL`
// per case, best of 3 (auto: the one fft_block picks). bench/fft/run.sh pairs them with numpy.
#include <chrono>
#include <complex>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/ops/fft.hpp"
#include "array/ops/fft_kernel.hpp"

namespace ta = tessera::array;

namespace {

struct Case {
  const char* name;
  ta::DType dtype;
  ta::Shape shape;
  ta::FftKind kind;
  size_t axis;
};

ta::NDArray random_array(ta::DType dtype, const ta::Shape& shape) {
  ta::NDArray a = ta::NDArray::empty(dtype, shape);
  std::mt19937_64 rng(0);
  std::normal_distribution<double> normal;
  ta::dispatch(dtype, [&]<class T>() {
    if constexpr (std::is_floating_point_v<T>) {
      T* p = a.data<T>();
      for (int64_t i = 0; i < a.size(); ++i) p[i] = static_cast<T>(normal(rng));
    } else if constexpr (requires { typename T::value_type; }) {
      using R = typename T::value_type;
      T* p = a.data<T>();
      for (int64_t i = 0; i < a.size(); ++i) p[i] = T(static_cast<R>(normal(rng)), static_cast<R>(normal(rng)));
    }
  });
  return a;
}

}  // namespace

int main() {
  const Case cases[] = {
      {"rfft-rows-f32", ta::DType::float32(), {1024, 16384}, ta::FftKind::real, 1},
      {"fft-cols-c64", ta::DType::complex64(), {16384, 128}, ta::FftKind::forward, 0},
      {"fft-rows-c128", ta::DType::complex128(), {512, 8192}, ta::FftKind::forward, 1},
      {"rfft-rows-f64-3000", ta::DType::float64(), {1000, 3000}, ta::FftKind::real, 1},
      {"ifft-cols-c128-1000", ta::DType::complex128(), {1000, 500}, ta::FftKind::inverse, 0},
  };
  for (const Case& c : cases) {
    const ta::NDArray a = random_array(c.dtype, c.shape);
    const int64_t n = c.shape[c.axis];
    const ta::DType out = ta::fft_result_dtype(c.kind, c.dtype);
    auto best_of_3 = [&](ta::detail::FftKernel kernel) {
      double best = std::numeric_limits<double>::infinity();
      for (int r = 0; r < 3; ++r) {
        const auto t = std::chrono::steady_clock::now();
        const ta::NDArray y = ta::detail::fft_block_with(a, c.kind, c.axis, n, ta::FftNorm::backward, out, kernel);
        best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
      }
      return best;
    };
    const double lanes = best_of_3(ta::detail::FftKernel::lanes);
    const double eigen = best_of_3(ta::detail::FftKernel::eigen);
    std::printf("%s lanes=%.4f eigen=%.4f auto=%s\n", c.name, lanes, eigen,
                ta::detail::fft_kernel_for(c.kind, c.dtype, n, c.shape, c.axis) == ta::detail::FftKernel::lanes ? "lanes" : "eigen");
    std::fflush(stdout);
  }
  return 0;
}
