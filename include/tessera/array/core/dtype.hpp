// tessera/array/core/dtype.hpp — the element types of tessera arrays.
//
// A DType names one of numpy's fixed-size numeric types: bool, int8..int64,
// uint8..uint64, float16/32/64 and complex64/128, always in the machine's (little-
// endian) byte order. float16 elements are `Eigen::half` (IEEE binary16: each
// operation computes in float and rounds to half precision, as numpy's does).
// It parses and prints numpy's type strings (`<f8`, `|b1`, `<f2`,
// `<c16`), which is how .npy headers and zarr metadata spell types, and the
// names (`float64`). `dtype_of<T>` maps a C++ type to its DType and `dispatch`
// runs a templated lambda with the C++ type of a runtime DType, so one kernel
// serves every dtype.
//
// @code
//   using namespace tessera::array;
//   DType d = DType::parse("<f8");                 // DType::float64()
//   d.str();                                       // "<f8"
//   d.itemsize();                                  // 8
//   static_assert(dtype_of<std::complex<float>> == DType::complex64());
//   double s = dispatch(d, [&]<class T>() { return double(sizeof(T)); });  // 8.0
// @endcode
//
// Thread-safe: DType is a trivially copyable value.
#pragma once

#include <complex>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <type_traits>

#include <Eigen/Core>  // Eigen::half, the C++ type of float16

namespace tessera::array {

//! A numpy dtype: one of the fourteen element types of Id, with numpy's names, type strings and sizes.
class DType {
 public:
  //! Every supported type, in numpy's order of kinds (bool, signed, unsigned, float, complex).
  enum class Id : uint8_t {
    Bool, Int8, Int16, Int32, Int64, UInt8, UInt16, UInt32, UInt64,
    Float16, Float32, Float64, Complex64, Complex128,
  };
  //! How many ids there are (for tables and loops over all dtypes).
  static constexpr int count = 14;

  //! float64, numpy's default.
  constexpr DType() = default;
  //! The dtype of `id`.
  constexpr DType(Id id) : id_(id) {}  // NOLINT(google-explicit-constructor)

  //! The dtype of each name, as numpy spells it (`bool_` for bool).
  //! @{
  static constexpr DType bool_() { return Id::Bool; }
  static constexpr DType int8() { return Id::Int8; }
  static constexpr DType int16() { return Id::Int16; }
  static constexpr DType int32() { return Id::Int32; }
  static constexpr DType int64() { return Id::Int64; }
  static constexpr DType uint8() { return Id::UInt8; }
  static constexpr DType uint16() { return Id::UInt16; }
  static constexpr DType uint32() { return Id::UInt32; }
  static constexpr DType uint64() { return Id::UInt64; }
  static constexpr DType float16() { return Id::Float16; }
  static constexpr DType float32() { return Id::Float32; }
  static constexpr DType float64() { return Id::Float64; }
  static constexpr DType complex64() { return Id::Complex64; }
  static constexpr DType complex128() { return Id::Complex128; }
  //! @}

  //! Parses a numpy type string (`<f8`, `=i4`, `|b1`, `<c16`, `|u1`) or a name
  //! (`float64`, `bool`, `uint8`, `float16`). Throws TypeError naming what was found and
  //! what is accepted; a big-endian string (`>f8`) is refused as such.
  static DType parse(std::string_view text);
  //! As parse, and accepts big-endian strings (`>f8`), setting `*big_endian`
  //! (false for little-endian, native and one-byte types): for readers that swap
  //! stored bytes into native order (zarr, .npy).
  static DType parse(std::string_view text, bool* big_endian);
  //! numpy's big-endian type string: `>f8`, `|b1` for one-byte types.
  std::string big_endian_str() const;

  //! Which of the fourteen types this is.
  constexpr Id id() const { return id_; }
  //! Bytes per element.
  constexpr size_t itemsize() const { return kItemsize[static_cast<int>(id_)]; }
  //! numpy's kind character: 'b', 'i', 'u', 'f' or 'c'.
  constexpr char kind() const { return kKind[static_cast<int>(id_)]; }
  //! numpy's type string: `<f8`, `|b1`, `|i1`, `<c16`.
  std::string str() const;
  //! numpy's name: `float64`, `bool`, `complex128`.
  std::string name() const;

  //! True for signed and unsigned integers.
  constexpr bool is_integer() const { return kind() == 'i' || kind() == 'u'; }
  //! True for float16, float32 and float64.
  constexpr bool is_floating() const { return kind() == 'f'; }
  //! True for complex64 and complex128.
  constexpr bool is_complex() const { return kind() == 'c'; }

  //! Same type.
  friend constexpr bool operator==(DType a, DType b) { return a.id_ == b.id_; }

 private:
  static constexpr size_t kItemsize[count] = {1, 1, 2, 4, 8, 1, 2, 4, 8, 2, 4, 8, 8, 16};
  static constexpr char kKind[count] = {'b', 'i', 'i', 'i', 'i', 'u', 'u', 'u', 'u', 'f', 'f', 'f', 'c', 'c'};
  Id id_ = Id::Float64;
};

//! Reverses the bytes of each of `count` elements of `dtype` at `data`, in place
//! (each half of a complex number on its own): big-endian to native and back.
void byteswap(std::byte* data, size_t count, DType dtype);

namespace detail {

// No `value` member: the type has no DType (see the Element concept).
template <class T>
struct DTypeOf {};
template <>
struct DTypeOf<bool> : std::integral_constant<DType::Id, DType::Id::Bool> {};
template <>
struct DTypeOf<Eigen::half> : std::integral_constant<DType::Id, DType::Id::Float16> {};
template <>
struct DTypeOf<float> : std::integral_constant<DType::Id, DType::Id::Float32> {};
template <>
struct DTypeOf<double> : std::integral_constant<DType::Id, DType::Id::Float64> {};
template <>
struct DTypeOf<std::complex<float>> : std::integral_constant<DType::Id, DType::Id::Complex64> {};
template <>
struct DTypeOf<std::complex<double>> : std::integral_constant<DType::Id, DType::Id::Complex128> {};

// Every integer type (char, long, long long, int64_t...) maps by size and sign.
template <class T>
  requires(std::is_integral_v<T> && !std::is_same_v<T, bool>)
struct DTypeOf<T> {
  static constexpr DType::Id value = [] {
    constexpr int log2 = sizeof(T) == 1 ? 0 : sizeof(T) == 2 ? 1 : sizeof(T) == 4 ? 2 : 3;
    constexpr int base = std::is_signed_v<T> ? static_cast<int>(DType::Id::Int8)
                                             : static_cast<int>(DType::Id::UInt8);
    return static_cast<DType::Id>(base + log2);
  }();
};

}  // namespace detail

//! True for the C++ types that have a DType (const or not).
template <class T>
concept Element = requires { detail::DTypeOf<std::remove_cv_t<T>>::value; };

//! The DType of a C++ element type (const is ignored): `dtype_of<double> == DType::float64()`.
template <Element T>
inline constexpr DType dtype_of = DType(detail::DTypeOf<std::remove_cv_t<T>>::value);

//! True for the C++ types of the real floating dtypes: Eigen::half, float, double
//! (std::is_floating_point_v is false for Eigen::half).
template <class T>
inline constexpr bool is_floating_v = std::is_floating_point_v<T> || std::is_same_v<std::remove_cv_t<T>, Eigen::half>;

//! Calls `f.template operator()<T>()` with T the C++ type of `dtype` (bool,
//! int8_t..uint64_t, Eigen::half, float, double, std::complex<float|double>) and returns its
//! result; every instantiation must return the same type.
//! @code
//!   size_t n = dispatch(d, [&]<class T>() { return count_nonzero<T>(a); });
//! @endcode
template <class F>
decltype(auto) dispatch(DType dtype, F&& f) {
  switch (dtype.id()) {
    case DType::Id::Bool: return f.template operator()<bool>();
    case DType::Id::Int8: return f.template operator()<int8_t>();
    case DType::Id::Int16: return f.template operator()<int16_t>();
    case DType::Id::Int32: return f.template operator()<int32_t>();
    case DType::Id::Int64: return f.template operator()<int64_t>();
    case DType::Id::UInt8: return f.template operator()<uint8_t>();
    case DType::Id::UInt16: return f.template operator()<uint16_t>();
    case DType::Id::UInt32: return f.template operator()<uint32_t>();
    case DType::Id::UInt64: return f.template operator()<uint64_t>();
    case DType::Id::Float16: return f.template operator()<Eigen::half>();
    case DType::Id::Float32: return f.template operator()<float>();
    case DType::Id::Float64: return f.template operator()<double>();
    case DType::Id::Complex64: return f.template operator()<std::complex<float>>();
    case DType::Id::Complex128: break;
  }
  return f.template operator()<std::complex<double>>();
}

}  // namespace tessera::array
