// tessera/array/ops/map_blocks.hpp — run a kernel on every block, as dask's map_blocks.
//
// The kernel receives each input's block as a read-only row-major
// `Eigen::TensorMap` (`TensorMap<const T, N>`, core/tensor.hpp's route from
// NDArray to Eigen; a strided block is copied to C order first) and returns
// the output block: an NDArray, an `Eigen::Tensor<U, M, Eigen::RowMajor>`, or
// any Eigen tensor expression over the maps (evaluated into a new block).
// The untyped form gets NDArray blocks and takes the same route itself. Inputs must have the
// same number of blocks along each axis; block (i, j, ...) of the output comes
// from block (i, j, ...) of every input. The output keeps the first input's
// chunks unless `options.chunks` says otherwise, and each block the kernel
// returns is checked against them (ChunkError naming the block otherwise).
//
// Only code that calls map_blocks includes this header (and Eigen's Tensor module).
//
// @code
//   namespace ta = tessera::array;
//   ta::Array y = ta::map_blocks<double, 2>([](auto a) { return a * a + 1.0; }, x);
//   ta::Array d = ta::map_blocks<double, 1>([](auto a, auto b) { return a - b; }, x, z);
//   // untyped: NDArray blocks, mapped with tensor<T, N>() and written in place
//   ta::Array e = ta::map_blocks([](std::span<const ta::NDArray> in) {
//     ta::NDArray out = ta::NDArray::empty(ta::DType::float64(), in[0].shape());
//     out.tensor<double, 2>() = ta::c_contiguous(in[0]).tensor<const double, 2>().exp();
//     return out;
//   }, {x}, ta::DType::float64());
// @endcode
//
// Thread-safe: kernels run on worker threads, concurrently on different blocks.
#pragma once

#include <array>
#include <concepts>
#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include <span>

#include "tessera/array/array.hpp"
#include "tessera/array/core/tensor.hpp"

namespace tessera::array {

//! What map_blocks makes.
struct MapBlocksOptions {
  //! The output dtype; default: the kernel's element type when it returns an Eigen
  //! tensor, else the first input's dtype.
  std::optional<DType> dtype{};
  //! The output chunks; default: the first input's.
  std::optional<Chunks> chunks{};
  //! The prefix of the output's name (and the tasks' function name).
  std::string name = "map_blocks";
};

//! A kernel over whole blocks: receives block (i, j, ...) of every input.
using BlockFunction = std::function<NDArray(std::span<const NDArray> blocks)>;

//! The untyped form: `f` gets the NDArray blocks; the output has `dtype` and
//! `options.chunks` (default: the first input's). ChunkError when the inputs'
//! block grids differ or `options.chunks` has another block grid.
Array map_blocks(BlockFunction f, const std::vector<Array>& inputs, DType dtype,
                 const MapBlocksOptions& options = {});

namespace detail {

//! Throws TypeError unless every input has dtype `t` and `rank` axes.
void check_kernel_inputs(const std::vector<Array>& inputs, DType t, int rank);

template <class R>
NDArray to_block(R&& r) {
  using D = std::remove_cvref_t<R>;
  if constexpr (std::is_same_v<D, NDArray>) {
    return std::forward<R>(r);
  } else {
    using U = std::remove_const_t<typename Eigen::internal::traits<D>::Scalar>;
    constexpr int M = Eigen::internal::traits<D>::NumDimensions;
    if constexpr (std::is_same_v<D, Eigen::Tensor<U, M, Eigen::RowMajor>>) {
      return from_tensor(r);
    } else {
      // Evaluated straight into the block: an Eigen::Tensor first would take
      // fresh pages from malloc for every block (faulted in one by one) and
      // copy them into the block after.
      const auto dims = Eigen::TensorEvaluator<const D, Eigen::DefaultDevice>(r, Eigen::DefaultDevice()).dimensions();
      NDArray out = NDArray::empty(dtype_of<U>, Shape(dims.begin(), dims.end()));
      if (out.size() > 0) out.template tensor<U, M>() = r;
      return out;
    }
  }
}

template <class R>
DType result_dtype(DType fallback) {
  if constexpr (std::is_same_v<std::remove_cvref_t<R>, NDArray>) {
    return fallback;
  } else {
    return dtype_of<std::remove_const_t<typename Eigen::internal::traits<std::remove_cvref_t<R>>::Scalar>>;
  }
}

//! The map type a kernel gets for each input (A only counts the inputs).
template <class T, int N, class A>
using MapFor = TensorMap<const T, N>;

template <class T, int N, class F, size_t... I>
NDArray call_kernel(F& kernel, std::span<const NDArray> blocks, std::index_sequence<I...>) {
  // Keep contiguous copies alive while the kernel reads the maps.
  std::array<NDArray, sizeof...(I)> c{c_contiguous(blocks[I])...};
  return to_block(kernel(c[I].template tensor<const T, N>()...));
}

}  // namespace detail

//! `kernel(TensorMap<const T, N> a, ...)` on every block of `inputs...` (each of
//! dtype T and rank N, TypeError otherwise), with `options`.
template <Element T, int N, class F, std::same_as<Array>... A>
Array map_blocks(const MapBlocksOptions& options, F kernel, const Array& first, const A&... rest) {
  std::vector<Array> inputs{first, rest...};
  detail::check_kernel_inputs(inputs, dtype_of<T>, N);
  using R = std::invoke_result_t<F&, TensorMap<const T, N>, detail::MapFor<T, N, A>...>;
  DType dtype = options.dtype.value_or(detail::result_dtype<R>(first.dtype()));
  BlockFunction f = [kernel = std::move(kernel)](std::span<const NDArray> blocks) mutable {
    return detail::call_kernel<T, N>(kernel, blocks, std::make_index_sequence<1 + sizeof...(A)>{});
  };
  return map_blocks(std::move(f), inputs, dtype, options);
}

//! The same with default options.
template <Element T, int N, class F, std::same_as<Array>... A>
Array map_blocks(F kernel, const Array& first, const A&... rest) {
  return map_blocks<T, N>(MapBlocksOptions{}, std::move(kernel), first, rest...);
}

}  // namespace tessera::array
