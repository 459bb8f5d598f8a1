// Private helpers of tessera::array's lazy Array: walking block grids, reading
// block values, assembling results.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <absl/functional/function_ref.h>
#include <absl/types/span.h>

#include "storage/publish.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"
#include "tessera/graph/value.hpp"

namespace tessera::array {

//! Calls f(index) for every index of a grid of `extents` (C order; once for no
//! axes; never when an extent is 0).
template <class F>
void for_each_index(absl::Span<const int64_t> extents, F&& f) {
  for (int64_t e : extents) {
    if (e <= 0) return;
  }
  std::vector<int64_t> index(extents.size(), 0);
  while (true) {
    f(absl::Span<const int64_t>(index));
    size_t axis = extents.size();
    while (axis > 0) {
      --axis;
      if (++index[axis] < extents[axis]) break;
      index[axis] = 0;
      if (axis == 0) return;
    }
    if (extents.empty()) return;
  }
}

//! Calls f(block index) for every block of `chunks`, in C order.
template <class F>
void for_each_block(const Chunks& chunks, F&& f) {
  std::vector<int64_t> nb = chunks.numblocks();
  for_each_index(nb, std::forward<F>(f));
}

//! The NDArray held by a block's value; TypeError naming `what` otherwise.
const NDArray& block_value(const Value& v, const std::string& what);

//! What a write task does with block `index` of an array.
using BlockWrite = std::function<void(const std::vector<int64_t>& index, const NDArray& block)>;

//! Runs `x`'s graph with one more task per block, named (`name`, i, j, ...),
//! that hands the block to `write`: each block is released once written, and
//! the writes run in parallel.
void write_blocks(const Array& x, const std::string& name, BlockWrite write, const ComputeOptions& options);

//! write_blocks copying each block into its region of `target` (`x`'s shape
//! and dtype).
void store_into(const Array& x, const NDArray& target, const std::string& name, const ComputeOptions& options);

//! The only element of a one-element array.
Scalar element_scalar(const NDArray& a);

//! ChunkError unless `block` has `shape` and `dtype`; names `key` and `function`.
void check_block(const NDArray& block, const Shape& shape, DType dtype, const Key& key,
                 const std::string& function);

//! The zarr chunk shape of `chunks`: each axis's first block. ChunkError unless
//! the chunks are regular (equal blocks along each axis but a smaller last one).
Shape regular_chunk_shape(const Chunks& chunks);

//! How a store to `path` is published (storage/publish.hpp): a .npy file when
//! `path` ends in ".npy" (for every method), else a zarr array.
storage::PublishOptions publish_options(const std::string& path, const StoreOptions& options);

}  // namespace tessera::array
