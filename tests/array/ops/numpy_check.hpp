// Test helpers for tessera::array's lazy Array: random blocks, running numpy on
// .npy files in a scratch folder, and comparing results.
#pragma once

#include <cmath>
#include <complex>
#include <random>
#include <string>

#include <doctest/doctest.h>

#include "array/support.hpp"

#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/io/npy.hpp"

namespace tessera::array::testing {

//! Runs `body` with $TESSERA_PYTHON in the folder `dir`, numpy imported as np.
inline void run_python_in(const TempDir& dir, const std::string& body) {
  run_python(dir, "import os\nos.chdir(" + std::string(1, '"') + dir.path().string() + '"' + ")\n" + body);
}

//! Random elements of `dtype`: small integers (1..9 when `nonzero`, else -9..9,
//! 0..9 unsigned), normal floats, bools; the same for the same `rng` state.
inline NDArray random_block(DType dtype, const Shape& shape, std::mt19937_64& rng, bool nonzero = false) {
  NDArray out = NDArray::empty(dtype, shape);
  std::uniform_int_distribution<int> ints(nonzero ? 1 : (dtype.kind() == 'u' ? 0 : -9), 9);
  std::normal_distribution<double> normal(0.0, 3.0);
  dispatch(dtype, [&]<class T>() {
    T* p = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) {
      if constexpr (std::is_same_v<T, bool>) {
        p[i] = nonzero || (rng() & 1);
      } else if constexpr (std::is_integral_v<T>) {
        p[i] = static_cast<T>(ints(rng));
      } else if constexpr (std::is_floating_point_v<T>) {
        double v = normal(rng);
        p[i] = static_cast<T>(nonzero && std::abs(v) < 0.5 ? 1.5 : v);
      } else {
        using R = typename T::value_type;
        p[i] = T(static_cast<R>(normal(rng)), static_cast<R>(normal(rng)));
        if (nonzero && std::abs(p[i]) < 0.5) p[i] = T(1.5, 0);
      }
    }
  });
  return out;
}

//! Checks `got` against `want`: the same dtype and shape, integers and bools
//! exactly, floats within a relative tolerance fit for their precision.
inline void check_close(const NDArray& got, const NDArray& want, const std::string& what) {
  INFO(what);
  REQUIRE(got.has_value());
  CHECK(got.dtype().str() == want.dtype().str());
  REQUIRE(shape_str(got.shape()) == shape_str(want.shape()));
  if (!got.dtype().is_floating() && !got.dtype().is_complex()) {
    CHECK(array_equal(got.astype(want.dtype()), want.copy()));
    return;
  }
  const bool single = got.dtype() == DType::float32() || got.dtype() == DType::complex64();
  const double rtol = single ? 2e-4 : 1e-9, atol = single ? 1e-4 : 1e-9;
  NDArray g = got.astype(DType::complex128()), w = want.astype(DType::complex128());
  const auto* gp = g.data<const std::complex<double>>();
  const auto* wp = w.data<const std::complex<double>>();
  int64_t bad = 0;
  for (int64_t i = 0; i < g.size(); ++i) {
    const bool nan_g = std::isnan(gp[i].real()) || std::isnan(gp[i].imag());
    const bool nan_w = std::isnan(wp[i].real()) || std::isnan(wp[i].imag());
    if (nan_g != nan_w || (!nan_g && std::abs(gp[i] - wp[i]) > atol + rtol * std::abs(wp[i]))) {
      if (bad++ == 0) {
        INFO("first difference at flat index " << i << ": got " << gp[i] << ", numpy " << wp[i]);
        CHECK(false);
      }
    }
  }
  CHECK(bad == 0);
}

}  // namespace tessera::array::testing
