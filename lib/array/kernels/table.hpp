// Private: the array kernels that are compiled once per instruction set, and
// the table through which the rest of the library calls them.
//
// tessera is built for generic x86-64, so code compiled the ordinary way runs
// SSE2 only. The kernels below are where that costs most (a GEMM is 2-4x
// faster with AVX2+FMA or AVX-512), so kernels.cpp is compiled several times
// (lib/array/kernels/meson.build): once per instruction set, each time into a
// namespace of its own (isa_sse2, isa_avx2, isa_avx512, or isa_native under
// -Dnative=true), and dispatch.cpp picks one set once, at the first call, by
// what the CPU has and TESSERA_ISA. docs/kernels.md says how the copies are
// kept apart (Eigen's templates, which every copy instantiates).
//
// The table holds plain functions over plain pointers: no Eigen type crosses
// from one set's translation unit to another's.
#pragma once

#include <cstdint>
#include <string_view>
#include <type_traits>

namespace tessera::array::kernels {

//! C = A B (or C += A B when `accumulate`) for row-major, contiguous A (m x k),
//! B (k x n) and C (m x n), none of them overlapping.
template <class T>
using Gemm = void (*)(int64_t m, int64_t n, int64_t k, const T* a, const T* b, T* c, bool accumulate);

//! The sum of n contiguous values, in double.
template <class T>
using Sum = double (*)(const T* x, int64_t n);

//! The sum of (x[i] - m)^2 over n contiguous values, in double.
template <class T>
using SquaredDeviations = double (*)(const T* x, int64_t n, double m);

//! One instruction set's kernels.
struct Table {
  std::string_view isa;  //!< "sse2", "avx2", "avx512", "native" or (not x86-64) "generic"
  Gemm<float> gemm_f32;
  Gemm<double> gemm_f64;
  Sum<float> sum_f32;
  Sum<double> sum_f64;
  SquaredDeviations<float> squared_deviations_f32;
  SquaredDeviations<double> squared_deviations_f64;
};

//! The kernels this process runs (chosen once, at the first call); Error when
//! TESSERA_ISA names a set that is unknown or that the CPU cannot run.
const Table& active();

//! Whether the sets have a GEMM for T. Integer and complex types have none:
//! those stay on the baseline build's Eigen, in linalg.cpp (Eigen's complex GEMM
//! calls std::complex's operator*=, which an unoptimized build emits as a weak
//! function that every set would share: docs/kernels.md).
template <class T>
inline constexpr bool has_gemm = std::is_same_v<T, float> || std::is_same_v<T, double>;

//! The GEMM of the active set for T; has_gemm<T>.
template <class T>
Gemm<T> gemm() {
  static_assert(has_gemm<T>);
  const Table& t = active();
  if constexpr (std::is_same_v<T, float>) {
    return t.gemm_f32;
  } else {
    return t.gemm_f64;
  }
}

// Each compiled copy of kernels.cpp defines its set's table.
namespace isa_sse2 {
const Table& table();
}
namespace isa_avx2 {
const Table& table();
}
namespace isa_avx512 {
const Table& table();
}
namespace isa_native {
const Table& table();
}
namespace isa_generic {
const Table& table();
}

}  // namespace tessera::array::kernels
