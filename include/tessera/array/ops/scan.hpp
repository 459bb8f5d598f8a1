// tessera/array/ops/scan.hpp — cumulative sums and products along an axis.
//
// dask's sequential block scan: each block is scanned on its own (one task per
// block, an Eigen Tensor `cumsum`/`cumprod`), and block j along the axis then
// adds (multiplies by) the carried total of the blocks before it, its last
// slice: a chain of small carry tasks along the axis, one per block, so the
// blocks of the other axes scan in parallel. Result dtypes are numpy's (those
// of `sum`): bool and signed integers give int64, unsigned integers uint64,
// floats and complex numbers their own dtype.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array c = ta::cumsum(x, 0);        // np.cumsum(x, axis=0)
//   ta::Array p = ta::cumprod(x, -1);
// @endcode
//
// Thread-safe: these functions only build graphs.
#pragma once

#include "tessera/array/array.hpp"

namespace tessera::array {

//! The cumulative sum along `axis` (negative counts from the end). Error for an
//! axis out of range.
Array cumsum(const Array& x, int axis);
//! The cumulative product along `axis`.
Array cumprod(const Array& x, int axis);

}  // namespace tessera::array
