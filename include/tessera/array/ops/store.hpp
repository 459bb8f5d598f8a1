// tessera/array/ops/store.hpp — write an Array into a .npy file or a zarr store.
//
// `store` creates the target under a temporary name next to it, writes each
// block straight into the target's mapped memory from the block's own task (the
// block is never gathered in memory with others), and renames the target into
// place when every block was written. The data is then in the page cache, on
// its way to the disk as any written file's is (no fsync, as `cp` does none).
// When a task fails, nothing is left behind: the temporary file or directory
// is removed and the error is rethrown; an existing target is untouched.
//
// A .npy target (a path ending in `.npy`) is one C-order file, its space
// reserved before writing. Any other path is a zarr directory store whose
// chunks are the Array's chunks (regular chunks are needed: equal blocks along
// each axis but the last; ChunkError otherwise), in `options.zarr`'s version
// and codec. Raw chunks are written into mapped chunk files; encoded ones are
// encoded by each block's own task, so compression runs on every worker. A
// sharded v3 store's shards are the Array's blocks, cut into
// `zarr.inner_chunks`.
//
// @code
//   namespace ta = tessera::array;
//   ta::store(ta::random({1 << 20}, 1 << 16), "r.npy");
//   ta::store(x * 2.0, "out.zarr", {.compute = {.num_workers = 2}});
//   ta::store(x, "v3.zarr", {.zarr = {.zarr_format = 3, .codec = "zstd:3", .inner_chunks = {32, 32}}});
// @endcode
//
// Thread-safe: may be called from any thread; two stores to one path (or one
// target array) race.
#pragma once

#include <string>

#include "tessera/array/array.hpp"
#include "tessera/array/io/zarr.hpp"

namespace tessera::array {

//! How `store` writes.
struct StoreOptions {
  //! Replace an existing target (otherwise StorageError when it exists).
  bool overwrite = false;
  //! How the graph runs.
  ComputeOptions compute = {};
  //! A zarr target's version, codec and sharding.
  zarr::Format zarr = {};
};

//! Computes `x` into `path` (see the file comment). Throws StorageError when the
//! target exists (without `overwrite`) or cannot be created, TaskError when a
//! task fails.
void store(const Array& x, const std::string& path, const StoreOptions& options = {});

//! Computes `x` into the existing array `target` (x's shape and dtype, any
//! strides, writable), as dask's `da.store` into a numpy array: each block's
//! task copies the block into its region and lets it go. Reusing a target
//! skips the page faults of fresh memory that `compute()` pays. Throws Error
//! when `target` does not fit, TaskError when a task fails (the regions of the
//! blocks written by then hold new values).
//! @code
//!   tessera::array::NDArray out = tessera::array::NDArray::empty(x.dtype(), x.shape());
//!   tessera::array::store(x, out, {.num_workers = 2});
//! @endcode
void store(const Array& x, const NDArray& target, const ComputeOptions& options = {});

}  // namespace tessera::array
