// tessera/array/rechunk/rechunk_path.hpp — rechunk a .npy file or zarr store into a new store, by path.
//
// What `tessera rechunk SRC DST` and Python's `tessera.rechunk` share: the
// source is opened lazily (a .npy file in blocks of whole rows under the block
// limit, a zarr v2/v3 store in its own chunks), the memory budget `max_mem` is
// split so that each of the workers holds about one input and one output block
// (`rechunk_block_limit`), a target whose blocks cannot fit is refused before
// anything is written (`check_rechunk_memory`), and `rechunk_store` writes DST
// under a temporary name and publishes it by an atomic rename. An existing DST
// is refused unless `overwrite`, and even then only a store of the kind written
// that neither is nor holds SRC is replaced (store.hpp's check_target).
//
// @code
//   namespace ta = tessera::array;
//   ta::rechunk_path("rows.zarr", "cols.zarr", {-1, 256}, {.max_mem = int64_t{1} << 30});
// @endcode
//
// Thread-safe: each call works on its own paths.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/array/array.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/rechunk/rechunk.hpp"

namespace tessera::array {

//! How `rechunk_path` reads, plans and writes.
struct RechunkPathOptions {
  //! Bytes to stay under: blocks are planned to fit and held results spill beyond it.
  int64_t max_mem = int64_t{1} << 30;
  //! tasks, shuffle, or automatic (chosen by the plan).
  RechunkMethod method = RechunkMethod::automatic;
  //! Worker threads; 0: the hardware's.
  int num_workers = 0;
  //! Folder of the shuffle's scratch file and of spilled results; empty: DST's folder.
  std::string scratch_dir = {};
  //! Replace an existing DST of the kind written (never SRC or a folder holding it).
  bool overwrite = false;
  //! DST's zarr version, codec and (v3) inner chunks of shards.
  zarr::Format format = {};
  //! Callbacks and cancellation token of the run; its num_workers, memory_limit
  //! and scratch_dir are set from the fields above.
  ComputeOptions compute = {};
};

//! The largest block each worker may hold under `max_mem` with `workers` workers:
//! max_mem / (2 x workers + 2), at least 1.
int64_t rechunk_block_limit(int64_t max_mem, int workers);

//! The array at `path`: a .npy file (a path ending in .npy) in blocks of whole
//! rows of at most `block_limit` bytes (one row at least), else a zarr store in
//! its own chunks. Throws StorageError naming `path` when it cannot be read.
Array open_rechunk_source(const std::string& path, int64_t block_limit);

//! ChunkError unless the blocks of `target` (of `dtype`) fit the block limit of
//! `max_mem` with `workers`; the message gives the smallest max_mem that works.
void check_rechunk_memory(const Chunks& target, DType dtype, int64_t max_mem, int workers);

//! Rechunks the .npy file or zarr store `source` into a new zarr store at
//! `target` (a .npy file when it ends in .npy) with the chunks `chunks` (one
//! entry per axis). Throws StorageError when `target` exists (without
//! `overwrite`) or may not be replaced, or `source` cannot be read; ChunkError
//! for chunks that do not fit the array or `max_mem`; ValueError for
//! a codec the format cannot take; Cancelled through `compute.cancel`;
//! TaskError as `store` does. Nothing is left at `target` after an error but
//! what was there before.
RechunkStoreResult rechunk_path(const std::string& source, const std::string& target, const RechunkSpec& chunks,
                                const RechunkPathOptions& options = {});

}  // namespace tessera::array
