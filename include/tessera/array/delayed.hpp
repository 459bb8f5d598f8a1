// tessera/array/delayed.hpp — Arrays to and from lazy blocks (tessera/delayed), as
// dask's `Array.to_delayed` and `dask.array.from_delayed`.
//
// Apart from delayed.hpp so that a program using only `delayed` compiles no Eigen.
//
// @code
//   ta::Array x = ta::from_ndarray(ta::NDArray::from_vector<double>({1, 2, 3, 4}, {4}), {{2, 2}});
//   std::vector<tessera::Delayed<ta::NDArray>> blocks = tessera::to_delayed(x);   // 2 lazy blocks
//   ta::Array back = tessera::from_delayed(blocks, x.chunks(), x.dtype());        // the same array
// @endcode
#pragma once

#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/delayed/delayed.hpp"

namespace tessera {

//! One lazy value per block of `x`, in C order of its block grid, each keyed by the
//! block's key.
std::vector<Delayed<array::NDArray>> to_delayed(const array::Array& x);
//! A one-block Array of `shape` and `dtype` whose block is `block`'s value. Computing it
//! throws TaskError when the value has another shape or dtype.
array::Array from_delayed(const Delayed<array::NDArray>& block, const array::Shape& shape,
                          array::DType dtype);
//! An Array of `chunks` and `dtype` from a grid of lazy blocks, in C order of the block
//! grid. Throws ChunkError when the number of blocks is not the grid's.
array::Array from_delayed(const std::vector<Delayed<array::NDArray>>& blocks,
                          const array::Chunks& chunks, array::DType dtype);

}  // namespace tessera
