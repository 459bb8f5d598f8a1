// tessera/array/rechunk/rechunk.hpp — change the chunks of an Array by rewriting its graph.
//
// `rechunk(x, chunks)` returns an Array with the same elements as `x` cut into
// new blocks. Nothing runs: the result's graph adds tasks that build each new
// block from the pieces of the old blocks it overlaps (rechunk/plan.hpp has the
// maps). Three ways to move the data:
//   - `tasks` (dask's method): per output block, a `rechunk-split-<token>`
//     getitem task per old block it needs part of and a `rechunk-merge-<token>`
//     task that concatenates the pieces; with `fuse` (the default) the two are
//     one task that copies each piece straight from the old blocks into the new
//     one. A new block that is one whole old block is an alias of it. For
//     many-to-many rechunks, `plan_rechunk` adds intermediate chunkings so no
//     block exceeds `block_size_limit` and the graph stays near (old blocks +
//     new blocks) tasks.
//   - `shuffle` (the single-machine form of dask's p2p rechunk): each old block
//     is cut into shards written straight into a scratch buffer laid out by new
//     block, one buffer and one barrier per partial (see `partials`); each new
//     block is then a view of its region, never copied again. The buffer is a
//     memory-mapped file in `scratch_dir` (`disk`, the default), unlinked as
//     soon as it is mapped, so no scratch file outlives the run, even one that
//     fails; with `disk = false` it is heap memory.
//   - `automatic`: `tasks` when the graph is small, else `shuffle`, as dask's
//     `_choose_rechunk_method` decides.
// `rechunk_store(x, chunks, path)` rechunks into a new zarr store. It has its
// own choice, RechunkStoreMethod: by default, when the shards land in the
// store's chunk files in long runs, each old block's task writes them straight
// there (no new block is ever held, no scratch is written); otherwise it
// stores `rechunk(x, chunks)`, moving data by the RechunkMethod above.
// Chunks are given as `normalize_chunks` takes them, with dask's rechunk rule
// that an axis given as `keep` (or std::nullopt), or missing from a per-axis
// map, keeps its chunks; -1 takes the whole axis.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array x = ta::random({16384, 8192}, {256, -1});
//   ta::Array y = ta::rechunk(x, {-1, 256});                          // rows to columns
//   ta::Array z = ta::rechunk(x, std::map<size_t, ta::AxisChunks>{{1, 1024}});  // axis 0 kept
//   ta::Array s = ta::rechunk(x, {-1, 256}, {.method = ta::RechunkMethod::shuffle});
// @endcode
//
// Thread-safe: rechunk only builds a graph; the tasks it emits may run concurrently.
#pragma once

#include <concepts>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/array/ops/store.hpp"

namespace tessera::array {

//! In a rechunk target, an axis that keeps its chunks (dask's None).
struct KeepAxis {};
inline constexpr KeepAxis keep{};

//! One axis of a rechunk target: what normalize_chunks takes for an axis, or
//! `keep` / std::nullopt to keep the axis's chunks.
class RechunkAxis {
 public:
  //! Keep the axis's chunks.
  RechunkAxis(KeepAxis) {}        // NOLINT(google-explicit-constructor)
  //! Keep the axis's chunks.
  RechunkAxis(std::nullopt_t) {}  // NOLINT(google-explicit-constructor)
  //! Explicit block sizes.
  RechunkAxis(std::initializer_list<int64_t> sizes) : axis_(std::vector<int64_t>(sizes)) {}  // NOLINT
  //! Anything AxisChunks takes: a block size, -1, "auto", explicit sizes.
  template <class T>
    requires std::constructible_from<AxisChunks, T>
  RechunkAxis(T&& axis) : axis_(AxisChunks(std::forward<T>(axis))) {}  // NOLINT
  //! The axis's target, or nothing to keep it.
  const std::optional<AxisChunks>& target() const { return axis_; }

 private:
  std::optional<AxisChunks> axis_;
};

//! A rechunk target: anything normalize_chunks takes, a list of RechunkAxis, or
//! a map from axis to RechunkAxis in which missing axes keep their chunks.
class RechunkSpec {
 public:
  //! Anything normalize_chunks takes (ChunkSpec).
  template <class T>
    requires(std::constructible_from<ChunkSpec, T> &&
             !std::same_as<std::remove_cvref_t<T>, std::map<size_t, AxisChunks>>)
  RechunkSpec(T&& spec) : spec_(ChunkSpec(std::forward<T>(spec))) {}  // NOLINT
  //! One RechunkAxis per axis.
  RechunkSpec(std::initializer_list<RechunkAxis> axes) : axes_(axes), per_axis_(true) {}  // NOLINT
  //! One RechunkAxis per axis, made at run time.
  RechunkSpec(std::vector<RechunkAxis> axes) : axes_(std::move(axes)), per_axis_(true) {}  // NOLINT
  //! Axis -> chunks; missing axes keep theirs.
  RechunkSpec(const std::map<size_t, AxisChunks>& by_axis);    // NOLINT
  //! Axis -> RechunkAxis; missing axes keep theirs.
  RechunkSpec(const std::map<size_t, RechunkAxis>& by_axis);   // NOLINT

  //! The new chunks for an array now cut into `old_chunks`. Throws ChunkError
  //! as normalize_chunks does, and for an axis out of range in a map.
  Chunks resolve(const Chunks& old_chunks, DType dtype, int64_t limit_bytes) const;

 private:
  std::optional<ChunkSpec> spec_;
  std::vector<RechunkAxis> axes_;
  std::map<size_t, RechunkAxis> by_axis_;
  bool per_axis_ = false;
};

//! `x` with the chunks `chunks` (see the file comment). Returns `x` itself when
//! the chunks are already those. Throws ChunkError for a bad target.
//! @code
//!   auto y = tessera::array::rechunk(x, {-1, 256}, {.method = tessera::array::RechunkMethod::tasks});
//! @endcode
Array rechunk(const Array& x, const RechunkSpec& chunks, const RechunkOptions& options = {});

//! How `rechunk_store` writes the new store.
enum class RechunkStoreMethod {
  //! Each old block's task writes its shards straight into the chunk files when
  //! they land there in long runs (`direct_min_run`); else `through_rechunk`.
  direct_when_runs_are_long,
  //! `store(rechunk(x, chunks, options.rechunk), path, options.store)`.
  through_rechunk,
};

//! How `rechunk_store` rechunks and writes.
struct RechunkStoreOptions {
  //! Straight into the chunk files when the runs are long, or always through `rechunk`.
  RechunkStoreMethod method = RechunkStoreMethod::direct_when_runs_are_long;
  //! How data moves when the store is written through `rechunk`.
  RechunkOptions rechunk = {};
  //! Where and how the target is written.
  StoreOptions store = {};
  //! With `direct_when_runs_are_long`: write straight into the chunk files when
  //! the shards land there in runs of at least this many bytes on average
  //! (each run is one system call). 0: always; SIZE_MAX: never.
  size_t direct_min_run = size_t{64} << 10;
  //! Several processes write the store together, each one rank of this
  //! communicator (null: this process alone). Every rank calls rechunk_store
  //! with the same arguments; the rechunk is then the exchange of
  //! exchange.hpp: each rank reads the input blocks it owns, the shards go to
  //! the ranks owning their output blocks in rounds of all-to-all-v, and each
  //! rank writes its output chunks into one temporary store that rank 0
  //! publishes once every rank has succeeded. Each rank's rounds are planned
  //! under exchange_budget(`store.compute.memory_limit`) (1 GiB when 0), with
  //! `store.compute.num_workers` threads; `method` and `rechunk` do not apply.
  //! An error on any rank is an Error on every rank naming the rank (a task's:
  //! the same TaskError on every rank), and nothing is published. A communicator in `store.compute` does the same.
  std::shared_ptr<Communicator> communicator = nullptr;
};

//! What `rechunk_store` did.
struct RechunkStoreResult {
  Chunks chunks;        //!< the store's chunks
  bool direct = false;  //!< shards written straight into the chunk files
};

//! Rechunks `x` into a new zarr store at `path` whose chunks are `chunks`, as
//! rechunker's `rechunk(source, target_chunks, max_mem, target_store)` does.
//! With RechunkStoreMethod::direct_when_runs_are_long (the default), when the
//! shards of the old blocks land in the chunk files in long runs
//! (`direct_min_run`), each old block's task writes its shards straight into
//! the chunk files: no new block is ever held in memory and no scratch is
//! written. Otherwise, and with `through_rechunk`, it is
//! `store(rechunk(x, chunks, options.rechunk), path, options.store)`.
//! Either way the store appears at `path` only when complete (see store.hpp).
//! Throws ChunkError for a bad target or irregular chunks (zarr needs regular
//! ones), StorageError and TaskError as `store` does; across ranks
//! (`communicator`), a task's failure is the same TaskError on every rank
//! (its key, "on rank N: ..."), another failure tessera::Error naming the
//! ranks that failed.
//! @code
//!   namespace ta = tessera::array;
//!   ta::rechunk_store(ta::from_zarr("rows.zarr"), {-1, 256}, "cols.zarr",
//!                     {.store = {.compute = {.num_workers = 2}}});
//! @endcode
RechunkStoreResult rechunk_store(const Array& x, const RechunkSpec& chunks, const std::string& path,
                                 const RechunkStoreOptions& options = {});

}  // namespace tessera::array
