// What zarr v2's element filters (delta, fixedscaleoffset) share: the element
// types they name ("dtype", "astype"), checked to be real numbers, and a typed
// walk over two byte spans.
#pragma once

#include <cstring>
#include <type_traits>

#include "array/io/codecs/codec.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::codec::detail {

//! The numeric DType in `config[key]` (defaulting to `fallback`); bool, complex and
//! big-endian types are refused naming the codec.
DType numeric_dtype(const nlohmann::json& config, const char* key, DType fallback, const char* codec,
                    const Context& context);

template <class T>
inline constexpr bool kReal = (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) || std::is_same_v<T, Eigen::half>;

//! Calls f.template operator()<From, To>() for two numeric dtypes.
template <class F>
void dispatch2(DType a, DType b, F&& f) {
  dispatch(a, [&]<class A>() {
    dispatch(b, [&]<class B>() {
      if constexpr (kReal<A> && kReal<B>) f.template operator()<A, B>();
    });
  });
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof(T));
  return v;
}

template <class T>
void put(std::byte* p, T v) {
  std::memcpy(p, &v, sizeof(T));
}

//! A spec's element type argument (`args[i]`, a numpy type string such as "<i2",
//! numeric and little-endian), or `fallback` when absent; CodecSpecError
//! naming the codec otherwise.
DType spec_dtype(const std::vector<std::string>& args, size_t i, DType fallback, const char* codec);

//! The element count of `in` bytes of `from` elements writing to `out` bytes of `to`
//! elements; CodecError unless `in` is whole elements and `out` has room.
size_t element_count(Bytes in, DType from, MutableBytes out, DType to, const char* codec);

}  // namespace tessera::array::codec::detail
