// Private: the block-level work of a rechunk — views of boxes, copies of
// pieces into new blocks — and the graph steps of each method.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/inlined_vector.h>
#include <absl/functional/function_ref.h>
#include <span>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"

namespace tessera::array::detail {

//! A view of the box `[start, start + shape)` of `a`.
NDArray box_view(const NDArray& a, std::span<const int64_t> start, std::span<const int64_t> shape);

//! The box of `a` as a C-contiguous block: the view when it is one, else a copy.
NDArray contiguous_box(const NDArray& a, std::span<const int64_t> start, std::span<const int64_t> shape);

//! An n-D index or extent stored inline: a graph holds one per piece and axis.
using SmallIndex = absl::InlinedVector<int64_t, 4>;

//! One piece of a new block: the box `[source_start, source_start + shape)` of
//! source `source` goes to `output_start`.
struct PieceCopy {
  size_t source = 0;
  SmallIndex source_start;
  SmallIndex output_start;
  SmallIndex shape;
  //! The piece is its whole source block (a fused task's source is then read as is).
  bool whole = false;
};

//! How to build one new block from its sources.
struct BlockAssembly {
  DType dtype;
  Shape shape;
  std::vector<PieceCopy> pieces;
};

//! Copies every piece of `sources` into `out` (which has the plan's shape).
//! Throws ChunkError when a source is not the block the plan expects.
void copy_pieces(const std::vector<NDArray>& sources, const BlockAssembly& plan, const NDArray& out);

//! A fresh C-order block built from `sources` by `plan`.
NDArray assemble_block(const std::vector<NDArray>& sources, const BlockAssembly& plan);

//! For each axis and each old block along it, the new blocks it feeds
//! (`new_from_old_axis` of every axis): what drives methods that go through
//! the old blocks one by one.
using Feeds = std::vector<std::vector<std::vector<int64_t>>>;
Feeds feeds_of(const std::vector<AxisMap>& maps, const Chunks& old_chunks);

//! The part of one old block that goes to one new block: the box
//! `[source_start, source_start + shape)` of the old block lands at
//! `target_start` in new block `new_block`.
struct Shard {
  SmallIndex new_block;
  SmallIndex source_start;
  SmallIndex target_start;
  SmallIndex shape;
};

//! Calls `f` for every shard of old block `in` whose new block lies in
//! `[new_begin, new_end)` on every axis, in C order of the new blocks.
void for_each_shard(const std::vector<AxisMap>& maps, const Feeds& feeds, std::span<const int64_t> in,
                    std::span<const int64_t> new_begin, std::span<const int64_t> new_end,
                    absl::FunctionRef<void(const Shard&)> f);

//! The array a rechunk step reads: block (i, j, ...) is the key (name, i, j, ...).
struct StepInput {
  std::string name;
  Chunks chunks;
  DType dtype;
  Key block_key(std::span<const int64_t> index) const { return Key(name, index); }
};

//! The tasks of one rechunk step and the name of the blocks it makes.
struct Step {
  std::string name;
  Graph layer;
};

//! One step of a rechunk: the chunks it makes and how.
struct PlannedStep {
  Chunks chunks;
  RechunkMethod method = RechunkMethod::tasks;  //!< tasks or shuffle
  bool empty = false;                           //!< an empty array: blocks made from nothing
  //! Names the step for tokens: "tasks-fused", "tasks", "shuffle-disk", "shuffle-memory", "empty".
  std::string label(const RechunkOptions& options) const;
};

//! The steps from `x` to `target` (none when the chunks are already those):
//! the method chosen, and for `tasks` the intermediate chunkings planned.
std::vector<PlannedStep> plan_steps(const StepInput& x, const Chunks& target, const RechunkOptions& options);

//! The tasks of one planned step over `x`; `token` makes its names unique.
Step make_layer(const StepInput& x, const PlannedStep& step, const RechunkOptions& options, const std::string& token);

//! One step by the `tasks` method, fused or not (RechunkOptions::fuse and
//! fused_task_limit); `token` makes the names unique.
Step tasks_layer(const StepInput& x, const Chunks& chunks, const RechunkOptions& options, const std::string& token);

//! The `shuffle` method, in one step.
Step shuffle_layer(const StepInput& x, const Chunks& chunks, const RechunkOptions& options, const std::string& token);

//! An empty array's blocks in new chunks: no task reads the old blocks.
Step empty_layer(const StepInput& x, const Chunks& chunks, const std::string& token);

}  // namespace tessera::array::detail
