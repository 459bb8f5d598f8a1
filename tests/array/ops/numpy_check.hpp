// Test helpers for tessera::array's lazy Array: random blocks, running numpy on
// .npy files in a scratch folder, and comparing results.
#pragma once

#include <cmath>
#include <complex>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>
#include <span>

#include <doctest/doctest.h>

#include "array/support.hpp"

#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"

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
      } else if constexpr (is_floating_v<T>) {
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

//! Some elements of a floating or complex array set to NaN (in a fresh copy).
inline NDArray with_nans(const NDArray& a, std::mt19937_64& rng) {
  NDArray out = a.copy();
  dispatch(out.dtype(), [&]<class T>() {
    if constexpr (is_floating_v<T>) {
      for (int64_t i = 0; i < out.size(); ++i) {
        if (rng() % 4 == 0) out.data<T>()[i] = static_cast<T>(std::nan(""));
      }
    } else if constexpr (requires { typename T::value_type; }) {
      for (int64_t i = 0; i < out.size(); ++i) {
        if (rng() % 4 == 0) out.data<T>()[i] = T(std::nan(""), 0);
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
  // float16 keeps 11 bits: numpy rounds each partial sum of a reduction or scan to
  // float16 where tessera may round once, a few units in the last place apart.
  const bool half = got.dtype() == DType::float16();
  const double rtol = half ? 1e-2 : single ? 2e-4 : 1e-9, atol = half ? 2e-2 : single ? 1e-4 : 1e-9;
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

//! The dtypes the numpy comparisons draw from.
inline constexpr DType kDTypes[] = {DType::bool_(),   DType::int8(),    DType::int32(),     DType::int64(),
                         DType::uint8(),   DType::uint16(),  DType::uint64(),    DType::float16(),
                         DType::float32(), DType::float64(), DType::complex64(), DType::complex128()};

//! A random array to compare: dtype, shape and chunks.
struct Case {
  DType dtype;
  Shape shape;
  Chunks chunks;
};

// Random sizes that add up to `n` (the single size 0 for an empty axis).
inline std::vector<int64_t> random_sizes(int64_t n, std::mt19937_64& rng) {
  if (n == 0) return {0};
  std::vector<int64_t> sizes;
  while (n > 0) {
    int64_t s = std::uniform_int_distribution<int64_t>(1, n)(rng);
    sizes.push_back(s);
    n -= s;
  }
  return sizes;
}

//! Up to 3 axes of 0 (when `allow_empty`) to 11 elements, cut at random, of a dtype from `dtypes`.
inline Case random_case(std::mt19937_64& rng, bool allow_empty, std::span<const DType> dtypes = kDTypes) {
  Case c;
  c.dtype = dtypes[rng() % dtypes.size()];
  const size_t ndim = 1 + rng() % 3;
  std::vector<std::vector<int64_t>> sizes;
  for (size_t k = 0; k < ndim; ++k) {
    int64_t n = std::uniform_int_distribution<int64_t>(allow_empty ? 0 : 1, 11)(rng);
    c.shape.push_back(n);
    sizes.push_back(random_sizes(n, rng));
  }
  c.chunks = Chunks(sizes);
  return c;
}

// Expressions to check in one Python run: `name` is saved by numpy from `python`.
struct Expected {
  std::string name;
  std::string python;
  Array array;
};

//! Runs numpy once for all `items` (a.npy and b.npy loaded as a and b) and compares each.
inline void check_all(const TempDir& dir, const std::vector<Expected>& items) {
  std::string script = "a = np.load('a.npy')\nb = np.load('b.npy')\n";
  for (const Expected& e : items) absl::StrAppend(&script, "np.save('", e.name, ".npy', np.asarray(", e.python, "))\n");
  run_python_in(dir, script);
  int i = 0;
  for (const Expected& e : items) {
    NDArray got = e.array.compute({.num_workers = 1 + (i++ % 2)});
    check_close(got, npy::open(dir / (e.name + ".npy")), absl::StrCat(e.python, "  (tessera: ", e.array.name(), ")"));
  }
}

inline std::string case_text(const Case& c) {
  return absl::StrCat(std::string(c.dtype.name()), " ", shape_str(c.shape), " chunks ", c.chunks.str());
}

// A random case whose data numpy finds in a.npy and b.npy (b without zeros);
// returns the case and `a` as tessera reads it from the file.
inline std::pair<Case, Array> prepare(const TempDir& dir, std::mt19937_64& rng, bool allow_empty, NDArray* b_out = nullptr,
                                      std::span<const DType> dtypes = kDTypes) {
  Case c = random_case(rng, allow_empty, dtypes);
  NDArray a = random_block(c.dtype, c.shape, rng), b = random_block(c.dtype, c.shape, rng, /*nonzero=*/true);
  npy::save(dir / "a.npy", a);
  npy::save(dir / "b.npy", b);
  if (b_out) *b_out = b;
  return {c, from_npy(dir / "a.npy", c.chunks)};
}

}  // namespace tessera::array::testing
