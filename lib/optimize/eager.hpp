// Private: a model of how the schedulers run a graph with one worker (dask's
// get_async: a LIFO ready stack, the tasks one completion makes ready pushed so
// the best priority pops first, a result dropped when its last dependent has
// run), used by order() to compare candidate orders and to sequence roots.
#pragma once

#include <cstdint>
#include <vector>

#include <span>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "order_detail.hpp"

namespace tessera::detail {

//! The graph as the schedulers run it: only tasks run and are counted;
//! literals are data from the start; aliases are resolved, so a task reading
//! an alias waits for its target; `kept` results (requested outputs) are never
//! dropped. Ids are the compiled ids; `deps`/`dents` list tasks only.
struct EagerGraph {
  uint32_t n = 0;
  Csr deps, dents;
  std::vector<uint8_t> task, kept;
  EagerGraph(const Graph& g, const CompiledGraph& c, std::span<const Key> outputs);
};

//! Largest number of counted results held after a task, running the graph
//! with `priorities` (one per compiled id, lower first). Once the run holds
//! `give_up_at` results it stops and returns `give_up_at`: a caller that keeps
//! an order only when it holds fewer than its best need not finish the run.
uint32_t eager_max_held(const EagerGraph& eg, std::span<const uint32_t> priorities,
                        uint32_t give_up_at = UINT32_MAX);

//! When every task feeds at most one task and no result is kept, the least any
//! order can hold (the Sethi-Ullman count: a task's inputs run largest need
//! first, each finished one held while the next runs; trees likewise, each
//! sink held to the end); otherwise 0, which bounds nothing.
uint32_t forest_min_held(const EagerGraph& eg);

//! How eager_sequence picks the next root.
enum class RootChoice {
  least_growth,    // the root whose run leaves the fewest extra results held
  best_per_task,   // the most results freed (or fewest added) per task it lets run
  look_ahead,      // the root that, with the best root after it, raises the peak least
};

//! An order built by running the model: whenever only roots are left to start,
//! start the one among the first `candidates` roots (in `base` order) that
//! `choice` prefers, then everything it makes ready, last-ready first. Returns
//! priorities: the run sequence, each literal or alias just before its first
//! reader; and in `max_held` what eager_max_held() says of them (the run that
//! made them is the one it would simulate: tasks made ready together run in
//! base order, which is their order in the sequence). Once the run holds
//! `give_up_at` results it stops, with `max_held` = `give_up_at` and no
//! priorities: a caller keeping the order that holds fewest need not finish
//! a run that already holds as many as its best.
std::vector<uint32_t> eager_sequence(const Graph& g, const CompiledGraph& c, const EagerGraph& eg,
                                     std::span<const uint32_t> base, RootChoice choice, uint32_t candidates,
                                     uint32_t& max_held, uint32_t give_up_at = UINT32_MAX);

}  // namespace tessera::detail
