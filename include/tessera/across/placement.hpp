// tessera/across/placement.hpp — which rank runs each task of a Plan when a
// run spreads over several ranks (tessera/across/get.hpp).
//
// Every rank computes the same placement from the same Plan, so no rank tells
// another where a task runs. Two rules, one per kind of key, then a third that
// keeps data where it is:
//
//   - Array blocks: a key with indices, ("x", i, j), is a block of the array
//     named "x". The blocks of one name that the Plan needs, in row-major order
//     of their indices, are numbered b = 0..n-1, and block b goes to rank
//     b * ranks / n: contiguous runs of blocks, so neighbours share a rank, and
//     an element-wise step over the same grid ("y", i, j) = f(("x", i, j)) stays
//     on the rank of its input.
//
//         ranks = 2, x has 2 x 3 blocks:   (0,0) (0,1) (0,2) | (1,0) (1,1) (1,2)
//                                          rank 0            | rank 1
//
//   - Other keys (a name without indices, as delayed and hand-built graphs
//     make): taken in `order` priority and cut into `ranks` contiguous runs of
//     equal task counts, so a chain that order runs in one stretch stays on
//     one rank.
//
//   - Follow the inputs: a task whose inputs (those that are tasks) all sit on
//     one rank, at least one of them a block, runs on that rank, whatever the
//     first two rules said; taken dependencies first, so a chain of such tasks
//     follows its first link. The pieces a rechunk cuts from a block are cut
//     where the block is, and only they travel; a reduction tree's partial sums
//     stay with their blocks. An input without indices (a scalar that every
//     block reads) does not pull its readers to it, and no rank takes more
//     than its share (n / ranks, rounded up) of a grid's n blocks this way, so
//     the readers of one broadcast block stay spread.
//   - A name whose blocks read blocks of the same name (a tree kept as one
//     grid, ("sum", level, j)) is spread by the blocks that read none of it
//     (its leaves), and the levels above follow them.
//   - Process-local results: a task whose function name starts with
//     kProcessLocal ("process-local:") makes a value that cannot leave its
//     process (the shuffle rechunk's scratch buffer, which other tasks write
//     into). Its readers run on its rank, whatever the rules above said, and
//     so on through readers that are process-local too: a shuffle partial's
//     buffer, its shard writers and the views of its new blocks share a rank;
//     the old blocks travel to it, the new blocks leave it as NDArrays.
//
// Where the rules meet -- a key without indices that reads blocks of several
// ranks, such as the final step of a reduction -- the key's own kind decides:
// it goes by the order rule, and the blocks it reads travel to it. A name is
// the array's whole name (dask's token included): two arrays made by the same
// operation are two grids, each spread over all ranks.
//
// @code
//   tessera::Plan plan(g, keys);
//   std::vector<int> owner = tessera::place(plan, 4);   // owner[t] for task id t
// @endcode
//
// Thread-safe: reads the Plan only.
#pragma once

#include <string_view>
#include <vector>

#include "tessera/scheduler/plan.hpp"

namespace tessera {

//! The prefix of a task's function name whose result cannot leave its process:
//! place() keeps its readers on its rank (see the file comment).
inline constexpr std::string_view kProcessLocal = "process-local:";

//! The rank in [0, ranks) that runs each task of `plan` (by task id, see the
//! file comment for the rules). Costs n log n in the tasks plus one pass over
//! the edges. Throws ValueError for ranks < 1.
//! @code
//!   auto owner = tessera::place(tessera::Plan(g, "w"), 2);
//! @endcode
std::vector<int> place(const Plan& plan, int ranks);

}  // namespace tessera
