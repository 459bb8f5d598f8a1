// tessera/array/ops/shape.hpp — axes moved, added, removed, and arrays joined, as numpy does.
//
// Each operation is one layer of cheap tasks: `transpose`, `moveaxis` and
// `swapaxes` permute the block grid and make each block a transposed view (no
// copy); `squeeze` and `expand_dims` drop or add axes of length 1 (views again);
// `concatenate` and `stack` join arrays along an axis, each input block keeping
// its identity (an alias, or a cast when the dtypes are promoted). Before joining,
// the inputs' other axes are rechunked to the first input's chunks, so every
// output block comes from exactly one input block.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array t = ta::transpose(x);                       // x.T
//   ta::Array m = ta::moveaxis(x, 0, -1);                 // np.moveaxis(x, 0, -1)
//   ta::Array e = ta::expand_dims(x, 1);                  // x[:, None]
//   ta::Array c = ta::concatenate({x, y}, 0);             // np.concatenate([x, y], axis=0)
//   ta::Array s = ta::stack({x, y}, -1);
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

}  // namespace tessera::array
