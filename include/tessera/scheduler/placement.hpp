// tessera/scheduler/placement.hpp — which rank runs each task of a Plan when a
// run spreads over several ranks (GetOptions::communicator).
//
// Every rank computes the same placement from the same Plan, so no rank tells
// another where a task runs. Two rules, one per kind of key:
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
// Where the two rules meet -- a key without indices that reads blocks, such as
// the final step of a reduction -- the key's own kind decides: it goes by the
// order rule, and the blocks it reads travel to it. A name is the array's whole
// name (dask's token included): two arrays made by the same operation are two
// grids, each spread over all ranks.
//
// @code
//   tessera::Plan plan(g, keys);
//   std::vector<int> owner = tessera::place(plan, 4);   // owner[t] for task id t
// @endcode
//
// Thread-safe: reads the Plan only.
#pragma once

#include <vector>

#include "tessera/scheduler/plan.hpp"

namespace tessera {

//! The rank in [0, ranks) that runs each task of `plan` (by task id, see the
//! file comment for the rule). Costs n log n in the tasks. Throws ValueError for
//! ranks < 1.
//! @code
//!   auto owner = tessera::place(tessera::Plan(g, "w"), 2);
//! @endcode
std::vector<int> place(const Plan& plan, int ranks);

}  // namespace tessera
