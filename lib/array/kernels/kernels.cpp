// One instruction set's kernels (table.hpp): this file is compiled once per set,
// with that set's -m flags, TESSERA_ISA_NS naming the namespace the copy lives in
// and TESSERA_ISA_NAME its name (lib/array/kernels/meson.build).
//
// Every copy instantiates the same Eigen templates. Those are inline functions,
// emitted as weak symbols that the linker merges by name, so a copy built with
// -mavx512f could otherwise serve the baseline's calls and fault on a CPU without
// AVX-512. The build defines `Eigen` as a macro naming a namespace of the set's
// own (-DEigen=tessera_eigen_avx2, ...), which gives every Eigen symbol here a
// name no other copy has; tests/array/kernels/isa_symbols.py checks, on the built
// objects, that no weak function is defined by two sets. Nothing here includes a
// header that uses a standard container or std::complex, and the file is built
// without exceptions (Eigen then reports a failed allocation through operator new
// instead of constructing std::bad_alloc here), so no other inline function is
// shared, even unoptimized.
#include <Eigen/Core>

#include "array/kernels/table.hpp"

#ifndef TESSERA_ISA_NS
#error "kernels.cpp is compiled by lib/array/kernels/meson.build, which names the instruction set"
#endif

namespace tessera::array::kernels::TESSERA_ISA_NS {
namespace {

template <class T>
void gemm(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c, bool accumulate) {
  using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
  Eigen::Map<Matrix> z(c, m, n);
  if (k == 0) {
    if (!accumulate) z.setZero();
    return;
  }
  Eigen::Map<const Matrix> x(a, m, k);
  Eigen::Map<const Matrix> y(b, k, n);
  if (accumulate) {
    z.noalias() += x * y;
  } else {
    z.noalias() = x * y;
  }
}

// The reductions' row kernels (reductions.cpp), in double. float64 rows: Eigen's
// vectorized sums. float32 rows: Eigen's Core does not vectorize a cast (its
// Tensor module does, but brings std:: inline functions that the sets would
// share), so kLanes partial sums side by side, which the compiler keeps in
// vector registers of the set's width, converting in them.
constexpr int kLanes = 16;

template <class Term>
double sum_lanes(const float* x, int64_t n, Term term) {
  double acc[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int k = 0; k < kLanes; ++k) acc[k] += term(static_cast<double>(x[i + k]));
  }
  double tail = 0;
  for (; i < n; ++i) tail += term(static_cast<double>(x[i]));
  for (int width = kLanes / 2; width > 0; width /= 2) {
    for (int k = 0; k < width; ++k) acc[k] += acc[k + width];
  }
  return acc[0] + tail;
}

auto column(const double* x, int64_t n) { return Eigen::Map<const Eigen::ArrayXd>(x, n); }

double sum_f32(const float* x, int64_t n) {
  return sum_lanes(x, n, [](double v) { return v; });
}

double sum_f64(const double* x, int64_t n) { return n == 0 ? 0.0 : column(x, n).sum(); }

double squared_deviations_f32(const float* x, int64_t n, double m) {
  return sum_lanes(x, n, [m](double v) { return (v - m) * (v - m); });
}

double squared_deviations_f64(const double* x, int64_t n, double m) {
  return n == 0 ? 0.0 : (column(x, n) - m).square().sum();
}

}  // namespace

const Table& table() {
  static constexpr Table t{TESSERA_ISA_NAME,       gemm<float>,           gemm<double>, sum_f32, sum_f64,
                           squared_deviations_f32, squared_deviations_f64};
  return t;
}

}  // namespace tessera::array::kernels::TESSERA_ISA_NS
