// Private helpers on single elements, shared by the kernels of several operations.
#pragma once

#include <cmath>
#include <type_traits>

#include "tessera/array/core/dtype.hpp"

namespace tessera::array::detail {

//! numpy's isnan for one element of any dtype: a complex is NaN when either
//! part is; bool and integers never are.
template <class T>
bool is_nan(const T& v) {
  if constexpr (is_floating_v<T>) {
    return std::isnan(v);
  } else if constexpr (requires { v.imag(); }) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else {
    return false;
  }
}

}  // namespace tessera::array::detail
