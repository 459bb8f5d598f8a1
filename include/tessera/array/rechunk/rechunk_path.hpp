// tessera/array/rechunk/rechunk_path.hpp — rechunk a .npy file or zarr store into a new store, by path.
//
// What `tessera rechunk SRC DST` and Python's `tessera.rechunk` share: the
// source is opened lazily (a .npy file in blocks of whole rows under the block
// limit, a zarr v2/v3 store in blocks of its chunks, grouped while they are
// small), the memory budget `max_mem` is split so that each of the workers
// holds about one input and one output block (`rechunk_limits`), and a rechunk
// that cannot keep within it is refused with a BudgetError before anything is
// built or written: blocks past a worker's share, a shard index past it (16
// bytes per inner chunk, held twice while a shard is read, 48 while one is
// written), or a task graph past the part of max_mem left for it
// (`rechunk_graph_budget`; a task costs about a kilobyte however small its
// block, so a store declaring 2^31 chunks in a few hundred bytes is refused
// at once, naming the count). `rechunk_store` then writes DST under a
// temporary name and publishes it by an atomic rename. An existing DST is
// refused unless `overwrite`, and even then only a store of the kind written
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

//! How a refusal names the options it concerns: Python's keywords by
//! default, the command's flags (`--max-mem`, ...) for `tessera rechunk`.
struct RechunkOptionNames {
  std::string max_mem = "max_mem";       //!< the memory budget
  std::string chunks = "chunks";         //!< the target's chunks (a shard's inner chunks when sharded)
  std::string shard = "shard";           //!< the target's shards
  std::string workers = "num_workers";   //!< the number of workers
};

//! What a rechunk by path may hold under `max_mem` with `workers` workers.
struct RechunkLimits {
  int64_t max_mem = 0;       //!< the budget, for messages
  int workers = 1;           //!< worker threads (at least 1)
  int64_t block_limit = 1;   //!< bytes a block may have: max_mem / (2 x workers + 2), at least 1
  int64_t graph_budget = 0;  //!< bytes the task graph may have: rechunk_graph_budget(max_mem)
  RechunkOptionNames names = {};  //!< how messages name the options
};

//! The limits of `max_mem` (> 0) shared by `workers` (< 1 counts as 1) workers.
//! @code
//!   const auto limits = tessera::array::rechunk_limits(int64_t{1} << 30, 8);  // blocks of up to 1 GiB / 18
//! @endcode
RechunkLimits rechunk_limits(int64_t max_mem, int workers, RechunkOptionNames names = {});

//! The array to rechunk and the chunks it is stored in (what `keep` keeps).
struct RechunkSource {
  Array array;    //!< read in blocks under the block limit
  Chunks stored;  //!< the file's own chunks (a .npy file's: its read blocks)
};

//! The array at `path`: a .npy file (a path ending in .npy) in blocks of whole
//! rows of at most `limits.block_limit` bytes (one row at least), else a zarr
//! store in blocks of its chunks, grouped from the last axis into about 1 MiB
//! (less for a small array, so every worker gets blocks; more when the graph
//! budget needs fewer tasks; never past the block limit). Throws StorageError
//! naming `path` when it cannot be read; BudgetError naming the chunk count
//! when the reading tasks alone pass `limits.graph_budget`, or the shard index
//! passes the block limit, and ChunkError when the store declares more than 2^25
//! chunks (each a file lookup: too many to read in a sane time), before any task is made.
RechunkSource open_rechunk_source(const std::string& path, const RechunkLimits& limits);

//! BudgetError unless each worker can hold its blocks of `target` (of `dtype`)
//! under `limits` and, with `inner` chunks (sharded), a shard's index with it
//! (48 bytes per inner chunk while written); the message gives the smallest
//! max_mem that works or what to change.
void check_rechunk_memory(const Chunks& target, const Shape& inner, DType dtype, const RechunkLimits& limits);

//! BudgetError naming both chunk counts unless the graph of reading `from`,
//! rechunking to `to` and storing (rechunk_graph_nbytes) fits `limits.graph_budget`.
void check_rechunk_graph(const Chunks& from, const Chunks& to, const RechunkLimits& limits);

//! Rechunks the .npy file or zarr store `source` into a new zarr store at
//! `target` (a .npy file when it ends in .npy) with the chunks `chunks` (one
//! entry per axis). Throws StorageError when `target` exists (without
//! `overwrite`) or may not be replaced, or `source` cannot be read; ChunkError
//! for chunks that do not fit the array, BudgetError (a ChunkError) for a
//! rechunk that cannot keep within `max_mem` (rechunk_limits' checks, with the
//! default RechunkOptionNames); CodecSpecError for a codec the format cannot
//! take; Cancelled through `compute.cancel`;
//! TaskError as `store` does. Nothing is left at `target` after an error but
//! what was there before.
RechunkStoreResult rechunk_path(const std::string& source, const std::string& target, const RechunkSpec& chunks,
                                const RechunkPathOptions& options = {});

}  // namespace tessera::array
