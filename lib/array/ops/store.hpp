// Private: the per-block write tasks that store, compute and rechunk_store share, and how a
// store is published.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "storage/publish.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/core/ndarray.hpp"

namespace tessera::array {

//! What a write task does with block `index` of an array.
using BlockWrite = std::function<void(const std::vector<int64_t>& index, const NDArray& block)>;

//! Runs `x`'s graph with one more task per block, named (`name`, i, j, ...),
//! that hands the block to `write`: each block is released once written, and
//! the writes run in parallel.
void write_blocks(const Array& x, const std::string& name, BlockWrite write, const ComputeOptions& options);

//! write_blocks copying each block into its region of `target` (`x`'s shape
//! and dtype).
void store_into(const Array& x, const NDArray& target, const std::string& name, const ComputeOptions& options);

//! How a store to `path` is published (storage/publish.hpp): a .npy file when
//! `path` ends in ".npy" (for every method), else a zarr array.
storage::PublishOptions publish_options(const std::string& path, const StoreOptions& options);

//! StorageError unless `publish` is a zarr store's: `what` ("store",
//! "rechunk_store") writes nothing else across ranks.
void require_zarr_across(const std::string& what, const std::string& path, const storage::PublishOptions& publish);

}  // namespace tessera::array
