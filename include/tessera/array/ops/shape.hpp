// tessera/array/ops/shape.hpp — axes moved, added, removed, and arrays joined, as numpy does.
//
// Each operation is one layer of cheap tasks: `transpose`, `moveaxis` and
// `swapaxes` permute the block grid and make each block a transposed view (no
// copy); `squeeze` and `expand_dims` drop or add axes of length 1 (views again);
// `concatenate` and `stack` join arrays along an axis, each input block keeping
// its identity (an alias, or a cast when the dtypes are promoted). Before joining,
// the inputs' other axes are rechunked to the first input's chunks, so every
// output block comes from exactly one input block. `reshape` follows dask: the
// new shape merges runs of adjacent axes or splits an axis into adjacent ones,
// the input is rechunked first where its blocks do not allow that block by
// block, then each block is reshaped (a view when it is contiguous).
//
// @code
//   namespace ta = tessera::array;
//   ta::Array t = ta::transpose(x);                       // x.T
//   ta::Array m = ta::moveaxis(x, 0, -1);                 // np.moveaxis(x, 0, -1)
//   ta::Array e = ta::expand_dims(x, 1);                  // x[:, None]
//   ta::Array c = ta::concatenate({x, y}, 0);             // np.concatenate([x, y], axis=0)
//   ta::Array s = ta::stack({x, y}, -1);
//   ta::Array r = ta::reshape(x, {-1, 4});                 // x.reshape(-1, 4)
// @endcode
//
// Thread-safe: these functions only build graphs.
#pragma once

#include <optional>
#include <vector>

#include "tessera/array/array.hpp"

namespace tessera::array {

//! The axes reversed (x.T), or permuted: output axis i is input axis `axes[i]`
//! (negative axes count from the end). Error unless `axes` is a permutation.
Array transpose(const Array& x, std::optional<std::vector<int>> axes = std::nullopt);
//! Axis `source` moved to position `destination`, the others kept in order.
Array moveaxis(const Array& x, int source, int destination);
//! Axes `a` and `b` exchanged.
Array swapaxes(const Array& x, int a, int b);
//! The axes of length 1 removed: all of them, or those in `axes` (Error when one
//! of them is not of length 1).
Array squeeze(const Array& x, std::optional<std::vector<int>> axes = std::nullopt);
//! A new axis of length 1 at position `axis` of the result (-1: last).
Array expand_dims(const Array& x, int axis);
//! The arrays joined along `axis`: the same number of axes and the same extents
//! on every other axis (Error otherwise); the dtype is their promotion.
Array concatenate(const std::vector<Array>& arrays, int axis = 0);
//! The arrays (all of one shape) stacked along a new axis `axis` of the result.
Array stack(const std::vector<Array>& arrays, int axis = 0);

//! `x` with the shape `shape` and its elements in the same C order, as numpy's
//! reshape; one extent may be -1 (inferred from the size). Blocks follow dask's
//! rules: axes merged into one or one axis split into several, the input
//! rechunked first where a block-wise reshape needs it. Errors: a second -1,
//! another negative extent, a size that differs from x's, and (unless x is one
//! block) a new shape that is not made of merges and splits of adjacent axes.
//! @code
//!   // x: (6, 5, 4) in (3, 2, 2) blocks; y: (6, 20), chunks ((3, 3), (4, 4, 4, 4, 4))
//!   ta::Array y = ta::reshape(x, {6, -1});
//! @endcode
Array reshape(const Array& x, const Shape& shape);

}  // namespace tessera::array
