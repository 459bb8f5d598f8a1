// tessera/array/core/tensor.hpp — NDArray <-> Eigen Tensor, the route for array kernels.
//
// tessera's array kernels are Eigen Tensor expressions over block memory (the
// design says so, and map_blocks hands its kernels these maps). The route has
// two directions, neither of which copies when it does not have to:
//   - NDArray -> Eigen: `a.tensor<T, N>()` maps a C-contiguous array as an
//     `Eigen::TensorMap` in row-major order (numpy's C order), so index (i, j)
//     of the map is element (i, j) of the array; `tensor<const T, N>()` maps
//     read-only memory (a mapped file). A strided view (a slice with a step, a
//     transpose) is refused with an Error that says so: `c_contiguous(a)` gives
//     a C-ordered copy to map (the array itself when it already is one). A
//     wrong element type or rank is a TypeError naming both.
//   - Eigen -> NDArray: assign an expression to the map of a fresh block
//     (`NDArray::empty`), which evaluates it in place; or `from_tensor(t)`
//     copies an evaluated row-major tensor into a new block.
// Kept apart from ndarray.hpp because Eigen's Tensor module is slow to compile:
// only the files that run Eigen kernels include it.
//
// @code
//   #include <tessera/array/core/tensor.hpp>
//   using namespace tessera::array;
//   NDArray out = NDArray::empty(DType::float64(), x.shape());
//   out.tensor<double, 2>() = x.tensor<const double, 2>() * 2.0 + 1.0;   // no copy of x
//   auto row_sums = c_contiguous(x.transpose()).tensor<const double, 2>().sum(std::array{0});
//   NDArray y = from_tensor(Eigen::Tensor<float, 1, Eigen::RowMajor>(5).setConstant(1));
// @endcode
#pragma once

#include <array>
#include <cstring>
#include <type_traits>

#include <unsupported/Eigen/CXX11/Tensor>

#include "tessera/array/core/ndarray.hpp"

namespace tessera::array {

//! The Eigen map `NDArray::tensor<T, N>()` returns: row-major, of `const Tensor` when T is const.
template <class T, int N>
using TensorMap = Eigen::TensorMap<std::conditional_t<std::is_const_v<T>,
                                                      const Eigen::Tensor<std::remove_const_t<T>, N, Eigen::RowMajor>,
                                                      Eigen::Tensor<T, N, Eigen::RowMajor>>>;

template <class T, int N>
auto NDArray::tensor() const {
  static_assert(Element<T>, "tensor<T, N>: T must be a tessera element type (or const one)");
  static_assert(N >= 0, "tensor<T, N>: N is the rank");
  check_tensor(dtype_of<T>, N, std::is_const_v<T>);
  std::array<Eigen::Index, N> dims;
  for (int i = 0; i < N; ++i) dims[i] = static_cast<Eigen::Index>(shape_[i]);
  return TensorMap<T, N>(reinterpret_cast<T*>(data()), dims);
}

//! A new C-ordered NDArray holding a copy of an evaluated row-major tensor.
template <class T, int N>
NDArray from_tensor(const Eigen::Tensor<T, N, Eigen::RowMajor>& t) {
  Shape shape(t.dimensions().begin(), t.dimensions().end());
  NDArray out = NDArray::empty(dtype_of<T>, std::move(shape));
  if (t.size() > 0) std::memcpy(out.data(), t.data(), static_cast<size_t>(t.size()) * sizeof(T));
  return out;
}

}  // namespace tessera::array
