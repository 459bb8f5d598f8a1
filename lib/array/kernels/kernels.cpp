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
// objects, that no weak symbol is defined by two sets. Nothing here includes a
// header that uses a standard container, so no other inline function is shared.
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

}  // namespace

const Table& table() {
  static constexpr Table t{TESSERA_ISA_NAME, gemm<float>, gemm<double>, gemm<std::complex<float>>,
                           gemm<std::complex<double>>};
  return t;
}

}  // namespace tessera::array::kernels::TESSERA_ISA_NS
