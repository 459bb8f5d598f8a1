// Private: the block-level work of a rechunk — views of boxes, copies of
// pieces into new blocks — and the graph steps of each method.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include <absl/functional/function_ref.h>
#include <absl/types/span.h>

#include "tessera/array/array.hpp"
#include "tessera/array/chunks.hpp"
#include "tessera/array/ndarray.hpp"
#include "tessera/array/rechunk.hpp"
#include "tessera/array/rechunk_plan.hpp"

namespace tessera::array::detail {

//! Calls `f(index)` for every index of the grid `extent`, in C order (once for
//! a 0-d grid, never for a grid with an extent 0).
void for_each_block(absl::Span<const int64_t> extent, absl::FunctionRef<void(absl::Span<const int64_t>)> f);

//! A view of the box `[start, start + shape)` of `a`.
NDArray box_view(const NDArray& a, absl::Span<const int64_t> start, absl::Span<const int64_t> shape);

//! The box of `a` as a C-contiguous block: the view when it is one, else a copy.
NDArray contiguous_box(const NDArray& a, absl::Span<const int64_t> start, absl::Span<const int64_t> shape);

//! One piece of a new block: the box `[source_start, source_start + shape)` of
//! source `source` goes to `output_start`.
struct PieceCopy {
  size_t source = 0;
  Intersection::Index source_start;
  Intersection::Index output_start;
  Intersection::Index shape;
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

//! A token naming one rechunk step of `x` to `chunks` by `method`.
std::string step_token(const Array& x, const Chunks& chunks, const std::string& method);

//! One step by the `tasks` method (fused or not).
Array tasks_step(const Array& x, const Chunks& chunks, bool fuse);

//! The `shuffle` method, in one step.
Array shuffle_step(const Array& x, const Chunks& chunks, const RechunkOptions& options);

//! An empty array's blocks in new chunks: no task reads the old blocks.
Array empty_step(const Array& x, const Chunks& chunks);

}  // namespace tessera::array::detail
