// Element-wise kernels read each operand as a flat run of the output block's
// elements in C order: contiguous (step 1), or one value for every element
// (step 0), as an operand broadcast from one element is (a Scalar made a 0-d
// array, `where(c, x, 0)`). The repeated value is never materialized into a
// full block: that copy cost more than the kernel itself (bench/algebra's where).
//
// The kernels themselves are Eigen Tensor expressions over these runs
// (as_expressions): bench/algebra's kernel rows time each beside the loop it
// replaced.
#pragma once

#include <cstdint>
#include <type_traits>

#include "tessera/array/core/tensor.hpp"

namespace tessera::array::detail {

//! An operand's elements at `data[i * step]`, kept alive by `keep`.
template <class T>
struct Flat {
  const T* data;
  int64_t step;
  NDArray keep;
};

//! True when every element of `x` is the same memory (all strides 0, or at most one element).
inline bool one_element(const NDArray& x) {
  if (x.size() <= 1) return true;
  for (size_t k = 0; k < x.ndim(); ++k) {
    if (x.shape()[k] > 1 && x.strides()[k] != 0) return false;
  }
  return true;
}

//! `x` (a block or a broadcast view of one) as a Flat of `dtype`: converted or
//! copied only when its dtype differs or its elements are strided.
template <class T>
Flat<T> flat(const NDArray& x, DType dtype) {
  NDArray keep;
  int64_t step = 1;
  if (one_element(x) && x.size() > 0) {
    // A 0-d view of the one element, converted alone.
    const NDArray first(x.buffer(), x.dtype(), {}, {}, x.offset());
    keep = x.dtype() == dtype ? first : first.astype(dtype);
    step = 0;
  } else if (x.dtype() != dtype) {
    keep = x.astype(dtype);
  } else {
    keep = x.is_c_contiguous() ? x : x.copy();
  }
  return {keep.data<const T>(), step, keep};
}

//! Calls `f(step)` with the step as a compile-time constant (0 or 1), so each
//! loop written in `f` is compiled, and vectorized, for contiguous operands and
//! for repeated ones separately.
template <class F>
decltype(auto) with_step(int64_t step, F&& f) {
  if (step == 0) return f(std::integral_constant<int64_t, 0>{});
  return f(std::integral_constant<int64_t, 1>{});
}

//! Calls `f(e...)` with each operand as a rank-1 Eigen expression of `n`
//! elements: the TensorMap of its run (step 1), or a constant of its one
//! element (step 0), so one expression written in `f` serves every mix of
//! block and repeated operands, each compiled (and vectorized) on its own.
//! `f` must evaluate its expression before it returns: the expressions refer to
//! maps that live only during the call.
template <class F>
void as_expressions(int64_t /*n: no operand left*/, F&& f) {
  f();
}

template <class F, class T, class... Rest>
void as_expressions(int64_t n, F&& f, const Flat<T>& first, const Flat<Rest>&... rest) {
  const TensorMap<const T, 1> map(first.data, n);  // read only where step is 1
  auto bind = [&](const auto& e) {
    as_expressions(n, [&](const auto&... others) { f(e, others...); }, rest...);
  };
  if (first.step == 0) {
    bind(map.constant(first.data[0]));
  } else {
    bind(map);
  }
}

}  // namespace tessera::array::detail
