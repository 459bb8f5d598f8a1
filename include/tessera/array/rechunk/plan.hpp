// tessera/array/rechunk/plan.hpp — which input blocks feed which output block,
// and how to get from one chunking to another under a memory limit.
//
// A rechunk maps the blocks of one chunking of an array onto the blocks of
// another. Along one axis the map is small: each output block is a run of
// pieces, each piece a slice of one input block. In n dimensions the pieces of
// an output block are the Cartesian product of its per-axis pieces, so this
// header keeps only the per-axis maps and builds the product for one output
// block at a time (`for_each_intersection`); the dense n-D map, whose size is
// the product of the per-axis piece counts, is never stored.
//
//   input   |--0--|--1--|--2--|        old_to_new_axis({5, 5, 5}, {3, 4, 5, 3}):
//   output  |-A-|-B-|--C--|-D-|          A <- 0[0:3]   B <- 0[3:5] 1[0:2]
//                                        C <- 1[2:5] 2[0:2]   D <- 2[2:5]
//
// Partials split a rechunk into independent groups of output blocks along each
// axis, so a scheduler can cull and release each group on its own; planning
// (`plan_rechunk`) chooses intermediate chunkings for many-to-many rechunks so
// that no block exceeds a byte limit while the graph stays near
// (input blocks + output blocks) tasks, after dask's `plan_rechunk`.
//
// @code
//   namespace ta = tessera::array;
//   ta::ChunkSizes old_chunks{{256, 256, 256, 256}, {1024}};
//   ta::ChunkSizes new_chunks{{1024}, {256, 256, 256, 256}};
//   auto maps = ta::old_to_new(old_chunks, new_chunks);
//   ta::for_each_intersection(maps, {0, 2}, [](const ta::Intersection& piece) {
//     // piece.input_block, piece.input_start, piece.output_start, piece.shape
//   });
//   auto steps = ta::plan_rechunk(old_chunks, new_chunks, /*itemsize=*/8, {});
// @endcode
//
// Thread-safe: every function here is pure.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/graph/function_ref.hpp"
#include <span>

#include "tessera/array/core/chunks.hpp"

namespace tessera::array {

//! Block sizes along each axis: `chunks[axis][block]`, as dask's chunk tuples.
using ChunkSizes = std::vector<std::vector<int64_t>>;

//! A slice `[start, stop)` of input block `block` along one axis, placed at
//! `output_start` inside its output block.
struct Piece {
  //! The input block's index along the axis.
  int64_t block = 0;
  //! First element taken, inside the input block.
  int64_t start = 0;
  //! One past the last element taken, inside the input block.
  int64_t stop = 0;
  //! Where the piece starts inside its output block.
  int64_t output_start = 0;
  //! Elements in the piece.
  int64_t size() const { return stop - start; }
  //! Same piece.
  friend bool operator==(const Piece&, const Piece&) = default;
};

//! For each output block along one axis, its pieces in order. A zero-size output
//! block gets one empty piece of the input block at its position.
using AxisMap = std::vector<std::vector<Piece>>;

//! The map of one axis. Throws ChunkError when a size is negative, an axis has
//! no block, or the sizes do not add up to the same length.
AxisMap old_to_new_axis(std::span<const int64_t> old_chunks, std::span<const int64_t> new_chunks);

//! The per-axis maps of a rechunk. Throws ChunkError as `old_to_new_axis` does,
//! and when the number of axes differs.
std::vector<AxisMap> old_to_new(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks);

//! For each input block along one axis, the output blocks it feeds (ascending):
//! the inverse of an AxisMap, for methods driven by input blocks.
std::vector<std::vector<int64_t>> new_from_old_axis(const AxisMap& map, size_t old_blocks);

//! One n-D piece of an output block: the box `[input_start, input_start + shape)`
//! of input block `input_block` goes to `output_start` in the output block.
//! `position` is the piece's index in the output block's grid of pieces.
struct Intersection {
  //! An n-D index.
  using Index = std::vector<int64_t>;
  //! The input block's grid index.
  Index input_block;
  //! Where the box starts inside the input block.
  Index input_start;
  //! Where the box goes inside the output block.
  Index output_start;
  //! The box's shape.
  Index shape;
  //! The piece's index in the output block's grid of pieces.
  Index position;
};

//! Calls `visit` for each piece of output block `output_block`, in C order of
//! `position`. Builds the Cartesian product of the per-axis pieces on the fly.
void for_each_intersection(const std::vector<AxisMap>& maps, std::span<const int64_t> output_block,
                           FunctionRef<void(const Intersection&)> visit);

//! The grid of pieces of one output block: its per-axis piece counts.
Intersection::Index piece_grid(const std::vector<AxisMap>& maps,
                               std::span<const int64_t> output_block);

//! A group of consecutive blocks along one axis: output blocks
//! `[new_begin, new_end)` read only input blocks `[old_begin, old_end)`.
struct AxisPartial {
  //! First input block of the group.
  int64_t old_begin = 0;
  //! One past its last input block.
  int64_t old_end = 0;
  //! First output block of the group.
  int64_t new_begin = 0;
  //! One past its last output block.
  int64_t new_end = 0;
  //! Same group.
  friend bool operator==(const AxisPartial&, const AxisPartial&) = default;
};

//! Partials along one axis: consecutive output blocks share a partial only when
//! they end in the same input block. Neighbouring partials may share the input
//! block at their boundary.
std::vector<AxisPartial> partials_axis(const AxisMap& map);

//! Partials along every axis; an n-D partial is one choice per axis.
std::vector<std::vector<AxisPartial>> partials(const std::vector<AxisMap>& maps);

//! The number of blocks of a chunking (the product of the per-axis counts).
int64_t number_of_blocks(const ChunkSizes& chunks);
//! The number of elements of the largest block (the product of per-axis maxima).
int64_t largest_block_size(const ChunkSizes& chunks);
//! The number of n-D pieces of a rechunk: the product of per-axis piece counts,
//! which is the number of getitem tasks of the `tasks` method at most.
int64_t count_intersections(const std::vector<AxisMap>& maps);
//! dask's cheap estimate of a rechunk's graph size: per axis, the number of
//! blocks of the crossed chunking (old + new - 1, or old when unchanged).
int64_t estimate_graph_size(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks);

//! Bytes of memory a task costs while a graph is built and run: the task and
//! its key, the scheduler's records of it, and its result's header while held
//! (measured: one task per chunk of a store of 2^20 one-byte chunks held
//! about 900 bytes each when rechunked by `tessera rechunk`).
inline constexpr int64_t kGraphBytesPerTask = 1024;
//! Bytes of memory each piece of a rechunk (an edge from an old block to a new
//! one) costs: the reference, the dependency records, the piece's plan.
inline constexpr int64_t kGraphBytesPerPiece = 256;

//! About how many bytes the graph of reading `old_chunks`, rechunking them to
//! `new_chunks` and storing those holds (old + 2 x new tasks, and every piece
//! between them), saturating at INT64_MAX: what a caller with a memory limit
//! checks before building anything, since the graph's own memory is not the
//! blocks' and a store of 2^31 tiny chunks would need terabytes of it.
//! Throws ChunkError for inconsistent chunkings.
//! @code
//!   int64_t bytes = tessera::array::rechunk_graph_nbytes(x.chunks().sizes(), {{1024}, {1024}});
//! @endcode
int64_t rechunk_graph_nbytes(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks);

//! The part of a memory limit a rechunk's graph may take (rechunk_graph_nbytes):
//! an eighth, and at least 16 MiB, which any graph of a few thousand tasks fits.
inline int64_t rechunk_graph_budget(int64_t memory_limit) {
  return memory_limit / 8 > (int64_t{16} << 20) ? memory_limit / 8 : int64_t{16} << 20;
}

//! The default graph-growth factor of rechunk planning and of the choice between
//! the `tasks` and `shuffle` methods (dask's `array.rechunk.threshold`).
inline constexpr double kDefaultRechunkThreshold = 4.0;

//! Limits for planning.
struct PlanOptions {
  //! No intermediate block is larger than this many bytes (or than the largest
  //! input or output block, when one of them is larger).
  int64_t block_size_limit = kDefaultChunkBytes;
  //! The graph-growth factor under which no intermediate step is added: a plan
  //! stops once its last step has fewer than threshold * (input blocks +
  //! output blocks) pieces (dask's `array.rechunk.threshold`).
  double threshold = kDefaultRechunkThreshold;
};

//! The chunkings to go through, the last one `new_chunks`: intermediate steps
//! are added for many-to-many rechunks so that each step's graph stays under
//! the threshold while no block passes the limit (see PlanOptions).
//! Throws ChunkError for inconsistent chunkings and for itemsize < 1.
std::vector<ChunkSizes> plan_rechunk(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks,
                                     int64_t itemsize, const PlanOptions& options);

//! How a rechunk moves data.
enum class RechunkMethod {
  //! `tasks` when the graph would be small, else `shuffle` (see
  //! choose_rechunk_method); `rechunk_store` has its own choice, RechunkStoreMethod.
  automatic,
  tasks,      //!< getitem + concatenate tasks per output block (dask's method)
  shuffle,    //!< shards written into a buffer laid out by output block
};

//! dask's `_choose_rechunk_method`: `tasks` when the number of pieces is below
//! threshold * (input blocks + output blocks), else `shuffle`.
RechunkMethod choose_rechunk_method(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks,
                                    double threshold = kDefaultRechunkThreshold);

//! Bytes a shard of the rechunk writes in one contiguous run of its new block,
//! on average: the pieces' mean widths multiplied from the last axis, up to and
//! including the first axis where pieces are narrower than their new blocks.
//! The disk shuffle avoids runs shorter than a page (see tasks.cpp's plan_steps).
int64_t mean_shard_run_bytes(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks, int64_t itemsize);

//! How `rechunk` (rechunk.hpp) moves data.
struct RechunkOptions {
  //! tasks, shuffle, or automatic (tasks for small graphs, else shuffle).
  RechunkMethod method = RechunkMethod::automatic;
  //! The largest block, in bytes, an intermediate step may make ("auto" chunks
  //! are sized by it too).
  int64_t block_size_limit = kDefaultChunkBytes;
  //! Graph-growth factor under which no intermediate step is planned, and the
  //! factor RechunkMethod::automatic compares the graph size against.
  double threshold = kDefaultRechunkThreshold;
  //! `tasks`: one task per new block copying the pieces straight from the old
  //! blocks, instead of getitem tasks and a concatenate task.
  bool fuse = true;
  //! `tasks` with `fuse`: the most bytes a fused task may hold, the whole old
  //! blocks it reads and its new block (0: no bound). A new block whose fused
  //! task would hold more is made from getitem pieces and a concatenate, whose
  //! tasks hold at most an old block and its piece, or the new block twice.
  //! Under a memory limit (GetOptions::memory_limit), pass the limit: the run
  //! refuses a task that needs more than it. rechunk_store does, when this is 0.
  //! It also bounds the intermediate blocks of a `tasks` plan (fused or not)
  //! to a quarter of it, below block_size_limit when that is larger: a block
  //! made from pieces is held twice at once (its pieces and itself).
  int64_t fused_task_limit = 0;
  //! `shuffle`: the scratch buffer is a memory-mapped file (else heap memory).
  bool disk = true;
  //! `shuffle` with `disk`: where scratch files go; empty means $TMPDIR or /tmp.
  std::string scratch_dir{};
};

namespace detail {
//! Splits each size minimally so that none exceeds `max_width` (>= 1).
std::vector<int64_t> divide_to_width(std::span<const int64_t> sizes, int64_t max_width);
//! Merges neighbours minimally, smallest sums first, until at most `max_number`
//! (>= 1) sizes remain.
std::vector<int64_t> merge_to_number(std::span<const int64_t> sizes, int64_t max_number);
}  // namespace detail

}  // namespace tessera::array
