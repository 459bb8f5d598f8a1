// tessera/array/ops/slicing.hpp — `x[a:b:c, ...]` on a lazy Array.
//
// Each output block is a view of one input block (a getitem task; none, only an
// alias, when the whole block is kept), so slicing copies nothing. Along each
// axis the output keeps one block per input block the slice touches, as dask
// does; a negative step walks the blocks backwards. `Slice::index(i)` picks one
// position and drops the axis.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array y = ta::slice(x, {ta::Slice{10, 90, 3}, ta::Slice::all()});    // x[10:90:3, :]
//   ta::Array r = ta::slice(x, {ta::Slice{std::nullopt, std::nullopt, -1}});  // x[::-1]
// @endcode
//
// Thread-safe: may be called from any thread.
#pragma once

#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/ndarray.hpp"

namespace tessera::array {

//! The view `x[s0, s1, ...]` (axes past the slices given are taken whole).
//! Error for more slices than axes, a zero step, or an index out of range.
Array slice(const Array& x, const std::vector<Slice>& slices);

}  // namespace tessera::array
