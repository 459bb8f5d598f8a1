// tessera/array/ops/store.hpp — write an Array into a .npy file or a zarr store.
//
// `store` creates the target under a temporary name next to it
// (`.<name>.tessera-tmp-<pid>-<random>`), writes each block straight into the
// target's mapped memory from the block's own task (the block is never gathered
// in memory with others), syncs it to the disk and publishes it with one atomic
// rename when every block was written. When a task fails or the run is
// cancelled, nothing is left behind: the temporary is removed and the error is
// rethrown; an existing target is untouched. With `overwrite`, an existing
// target is replaced only when it is of the kind written (a .npy file, or a
// zarr array: .zarray or zarr.json and chunk files, nothing else), and the
// final name holds the complete old or the complete new target at every
// instant. Temporaries left by a killed process are removed by the next store
// to the same path (`clean_temporaries` reports them).
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
// A path "FILE.h5:/group/x" (FILE ending in .h5, .hdf5, .he5, .nc or .nc4)
// is an HDF5 file holding the one dataset /group/x, chunked as the Array,
// its chunks encoded by each block's task (`options.hdf5`: deflate or zstd,
// shuffle) and written under libhdf5's lock (tessera/array/io/hdf5.hpp); a
// .nc file gets NetCDF-4 dimension scales. A bare "out.h5" is refused.
//
// Across ranks (`compute.communicator`, tessera/scheduler/options.hpp), every
// rank calls store with the same arguments: rank 0 makes the temporary store,
// each rank writes the chunks of the blocks it runs, and rank 0 publishes the
// store only after every rank has written its part. A task that fails on any
// rank is the same TaskError on every rank ("... failed: on rank 3: ..."):
// nothing is published, and rank 0 removes the temporary once every rank has
// stopped writing. Zarr targets only (StorageError for a .npy path).
//
// @code
//   namespace ta = tessera::array;
//   ta::store(ta::random({1 << 20}, 1 << 16), "r.npy");
//   ta::store(x * 2.0, "out.zarr", {.compute = {.num_workers = 2}});
//   ta::store(x, "v3.zarr", {.zarr = {.zarr_format = 3, .codec = "zstd:3", .inner_chunks = {32, 32}}});
//   ta::store(x, "out.nc:/tas", {.hdf5 = {.codec = "gzip:4", .shuffle = true, .dimension_names = {"time", "lat"}}});
// @endcode
//
// Thread-safe: may be called from any thread; two stores to one path (or one
// target array) race.
#pragma once

#include <string>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/io/zarr.hpp"

namespace tessera::array {

//! How `store` writes.
struct StoreOptions {
  //! Replace an existing target (otherwise StorageError when it exists).
  bool overwrite = false;
  //! Paths the target must neither be nor hold, with `overwrite` (a rechunk's
  //! source): such a target is refused.
  std::vector<std::string> protect = {};
  //! How the graph runs.
  ComputeOptions compute = {};
  //! A zarr target's version, codec and sharding.
  zarr::Format zarr = {};
  //! An HDF5 target's codec, shuffle and dimension names.
  hdf5::Format hdf5 = {};
};

//! Computes `x` into `path` (see the file comment). Throws StorageError when the
//! target exists (without `overwrite`) or cannot be created, TaskError when a
//! task fails.
void store(const Array& x, const std::string& path, const StoreOptions& options = {});

//! Throws StorageError unless `store(x, path, options)` may write `path`: it is
//! absent, or `options.overwrite` is set and it is a target of the kind written
//! (see the file comment) that is not the working directory and neither is nor
//! holds a path of `options.protect`. The message names what was found.
void check_target(const std::string& path, const StoreOptions& options);

//! Cleans what killed runs left next to `path` (their temporaries; an old
//! target renamed aside is put back when `path` is missing) and returns one
//! line per entry handled. Entries of running processes are left alone.
//! `store` does this itself; a program calls it to tell its user.
std::vector<std::string> clean_temporaries(const std::string& path);

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
