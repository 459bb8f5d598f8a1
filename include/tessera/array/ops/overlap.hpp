// tessera/array/ops/overlap.hpp — stencils: a kernel on each block widened by a
// halo from its neighbours, as dask's map_overlap.
//
// Each block is extended by `depth[k]` elements on both sides of axis k. The
// halo comes from the neighbouring blocks through getitem tasks (views of just
// the rows a neighbour gives), and at the array's edges from the boundary rule:
//   none      no halo beyond the array (edge blocks are extended inwards only)
//   reflect   mirrored, the edge element included (dask's reflect: 1 0 | 0 1 2)
//   periodic  from the other end of the axis
//   nearest   the edge element repeated
//   constant  `options.constant`
// The kernel gets the extended block (C order) and returns a block of the same
// shape; tessera trims the halo off. A depth larger than a chunk along its axis
// merges chunks first (a rechunk), unless `allow_rechunk` is false (ChunkError).
//
// @code
//   namespace ta = tessera::array;
//   // a 3 x 3 mean filter: depth 1 on both axes, edges mirrored
//   ta::Array y = ta::map_overlap([](const ta::NDArray& b) {
//     ta::NDArray out = ta::NDArray::zeros(b.dtype(), b.shape());
//     ...                                     // out(i, j) = mean of b around (i, j)
//     return out;
//   }, x, {.depth = {1, 1}, .boundary = ta::Boundary::reflect});
// @endcode
//
// Thread-safe: this function only builds a graph; kernels run concurrently.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/scalar.hpp"

namespace tessera::array {

//! What lies beyond the array's edges (see the header comment).
enum class Boundary { none, reflect, periodic, nearest, constant };

//! How map_overlap extends each block.
struct OverlapOptions {
  //! Halo width per axis; one entry applies to every axis.
  std::vector<int64_t> depth{};
  //! What lies beyond the array's edges.
  Boundary boundary = Boundary::reflect;
  //! The value beyond the edges with Boundary::constant.
  Scalar constant = Scalar(0.0);
  //! Merge chunks narrower than the depth (a rechunk) instead of refusing.
  bool allow_rechunk = true;
  //! The output dtype; default: the input's.
  std::optional<DType> dtype{};
  //! The prefix of the output's name (and the tasks' function name).
  std::string name = "map_overlap";
};

//! `kernel` on every block of `x` extended by the halo, trimmed after. Errors
//! (ChunkError) for a depth list of the wrong length, a negative depth, a depth
//! beyond the axis with reflect or periodic, a depth beyond a chunk without
//! allow_rechunk, and (when the kernel runs) a result of another shape.
Array map_overlap(std::function<NDArray(const NDArray&)> kernel, const Array& x, const OverlapOptions& options);

}  // namespace tessera::array
