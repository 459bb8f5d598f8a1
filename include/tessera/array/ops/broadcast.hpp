// tessera/array/ops/broadcast.hpp — numpy's broadcasting for lazy Arrays, with
// chunks unified as dask's `unify_chunks` does.
//
// Arrays of different shapes combine element by element when their shapes
// broadcast (numpy's rule: aligned from the last axis, each pair of extents
// equal or one of them 1; missing leading axes count as 1). Arrays of one shape
// cut into different chunks combine after `unify_chunks` rechunks them to the
// common refinement of their block boundaries (splits only, no block is ever
// merged), so block (i, j, ...) of every operand covers the same elements; an
// operand of extent 1 along an axis has one block there and is reused by every
// block of the others. `elementwise` (elementwise.hpp) and `where` use this.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array row = ta::ones({1, 6}, {1, 2});
//   ta::Array m = ta::zeros({4, 6}, {2, 3});
//   ta::Shape s = ta::broadcast_shapes({m.shape(), {6}});     // (4, 6)
//   std::vector<ta::Array> u = ta::unify_chunks({m, row});    // m: ((2, 2), (2, 1, 1, 2)); row: ((1,), (2, 1, 1, 2))
//   ta::Array b = ta::broadcast_to(row, {4, 6});              // blocks are views with a stride of 0
// @endcode
//
// Thread-safe: these functions only build graphs.
#pragma once

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <span>

#include "tessera/array/array.hpp"
#include "tessera/array/core/ndarray.hpp"

namespace tessera::array {

//! The shape `shapes` broadcast to. ChunkError when two extents differ and
//! neither is 1: "operands could not be broadcast together with shapes (3, 4) (5,)".
Shape broadcast_shapes(const std::vector<Shape>& shapes);

//! The arrays with leading axes of length 1 added up to the longest rank, and
//! rechunked so that along each axis every array that spans the broadcast
//! extent has the same chunks (the common refinement of their boundaries).
//! ChunkError when the shapes do not broadcast.
std::vector<Array> unify_chunks(const std::vector<Array>& arrays);

//! `x` broadcast to `shape` (numpy's broadcast_to): each block a view whose
//! broadcast axes have a stride of 0. New and broadcast axes are one block
//! each. ChunkError when x's shape does not broadcast to `shape`.
Array broadcast_to(const Array& x, const Shape& shape);

//! A kernel over one block of each input, each already broadcast (a view) to
//! the output block's shape.
using BroadcastFunction = std::function<NDArray(std::span<const NDArray> blocks)>;

//! One task per output block over one block of each input, the inputs broadcast
//! and their chunks unified (unify_chunks): the layer behind element-wise ops,
//! comparisons and `where`. The output is named `name`-token(name, `params`,
//! the inputs) and has `dtype`. ChunkError "`name`: operands could not be
//! broadcast ..." when the shapes do not broadcast.
Array blockwise_broadcast(const std::string& name, const std::string& params, const std::vector<Array>& inputs,
                          DType dtype, BroadcastFunction f);

//! A view of `block` broadcast to `shape` (stride 0 along its axes of extent 1
//! and the leading axes it lacks). Error when the shapes do not broadcast.
NDArray broadcast_block(const NDArray& block, const Shape& shape);

}  // namespace tessera::array
