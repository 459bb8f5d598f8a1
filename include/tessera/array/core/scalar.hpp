// tessera/array/core/scalar.hpp — one number of any tessera dtype, held exactly.
//
// A Scalar carries a fill value (zarr's `fill_value`, `full`), a reduction's
// result or a literal in an element-wise op without losing precision: it holds
// a bool, an int64, a uint64, a double or a complex<double>, and converts to a
// dtype's C++ type on demand, refusing conversions that would lose the value's
// meaning (NaN or out-of-range into an integer, a nonzero imaginary part into a
// real type).
//
// @code
//   tessera::array::Scalar s = 3;
//   s.to<double>();        // 3.0
//   Scalar(1e300).to<int32_t>();   // throws TypeError: 1e+300 does not fit int32
// @endcode
#pragma once

#include <cmath>
#include <complex>
#include <cstdint>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <variant>

#include "tessera/array/core/dtype.hpp"

namespace tessera::array {

//! One value of any dtype, kept as bool, int64, uint64, double or complex<double>.
class Scalar {
 public:
  //! 0 (an int64).
  Scalar() : value_(int64_t{0}) {}
  //! A real value (bool, integer or floating).
  template <class T>
    requires std::is_arithmetic_v<T>
  Scalar(T v) : value_(wrap(v)) {}  // NOLINT(google-explicit-constructor)
  //! A complex value.
  template <class T>
  Scalar(std::complex<T> v) : value_(std::complex<double>(v)) {}  // NOLINT
  //! A float16 value, held as the double it converts to exactly.
  Scalar(Eigen::half v) : value_(static_cast<double>(static_cast<float>(v))) {}  // NOLINT

  //! The dtype this value has on its own: bool, int64, uint64, float64 or complex128.
  DType dtype() const;
  //! The value as a T; throws TypeError when T cannot represent it (NaN, infinity or
  //! out of range into an integer or bool-free conversions, a nonzero imaginary part
  //! into a real type). Floating values into integers truncate toward zero.
  template <Element T>
  T to() const;
  //! Printed as Python would: `3`, `2.5`, `nan`, `True`, `(1+2j)`.
  std::string str() const;

  //! Same held kind and value (NaN equals NaN here, as fill values compare).
  friend bool operator==(const Scalar& a, const Scalar& b);

 private:
  using Held = std::variant<bool, int64_t, uint64_t, double, std::complex<double>>;
  template <class T>
  static Held wrap(T v) {
    if constexpr (std::is_same_v<T, bool>) return v;
    else if constexpr (std::is_floating_point_v<T>) return static_cast<double>(v);
    else if constexpr (std::is_signed_v<T>) return static_cast<int64_t>(v);
    else return static_cast<uint64_t>(v);
  }
  [[noreturn]] void throw_unrepresentable(DType target) const;
  template <class T>
  T to_integer() const;
  Held value_;
};

template <class T>
T Scalar::to_integer() const {
  using L = std::numeric_limits<T>;
  auto fits = [&](auto v) {
    using V = decltype(v);
    if constexpr (std::is_floating_point_v<V>) {
      // max + 1 == 2^digits is exact in floating point; truncation keeps (lo, hi).
      const V hi = std::ldexp(V(1), L::digits);
      const V lo = L::is_signed ? -hi : V(-1);
      return std::isfinite(v) && (L::is_signed ? v >= lo : v > lo) && v < hi;
    } else {
      return std::in_range<T>(v);
    }
  };
  return std::visit(
      [&](auto v) -> T {
        using V = decltype(v);
        if constexpr (std::is_same_v<V, std::complex<double>>) {
          if (v.imag() != 0 || !fits(v.real())) throw_unrepresentable(dtype_of<T>);
          return static_cast<T>(v.real());
        } else if constexpr (std::is_same_v<V, bool>) {
          return static_cast<T>(v);
        } else {
          if (!fits(v)) throw_unrepresentable(dtype_of<T>);
          return static_cast<T>(v);
        }
      },
      value_);
}

template <Element T>
T Scalar::to() const {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return std::visit([](auto v) { return v != decltype(v){}; }, value_);
  } else if constexpr (std::is_integral_v<U>) {
    return to_integer<U>();
  } else if constexpr (is_floating_v<U>) {
    return std::visit(
        [&](auto v) -> U {
          if constexpr (std::is_same_v<decltype(v), std::complex<double>>) {
            if (v.imag() != 0) throw_unrepresentable(dtype_of<U>);
            return static_cast<U>(v.real());
          } else {
            return static_cast<U>(v);
          }
        },
        value_);
  } else {  // complex
    using R = typename U::value_type;
    return std::visit(
        [](auto v) -> U {
          if constexpr (std::is_same_v<decltype(v), std::complex<double>>) return U(v);
          else return U(static_cast<R>(v), R(0));
        },
        value_);
  }
}

}  // namespace tessera::array
