// tessera/optimize/order.hpp — static priorities for running a graph with little memory.
//
// `order` gives every node a priority (0 runs first), following dask's current
// critical-path order (dask/order.py after dask PR 10660): it walks the graph
// the way a single-threaded scheduler would, finishing one part of the result
// before loading the inputs of the next, so few results are held at once. The
// schedulers break ties among ready tasks with it. Equal candidates are told
// apart by structure first and by the keys' dask sortkey order last, so the
// result is deterministic.
//
// Because a scheduler runs whatever a completion makes ready first, an order
// mostly decides which root (a task without dependencies) starts next. So
// `order` tries more than one root sequence: the critical-path order above,
// and three greedy ones that, whenever only roots are left to start, pick the
// root that leaves the fewest extra results held, the one that frees the
// most results per task it lets run, or the one that, followed by the best
// next root, raises the peak least (a root that opens part of the graph may
// be what lets the next one close it; tried on graphs of up to 50,000 tasks).
// It keeps the order under which a single-worker run holds the fewest results
// at once (the first one on a tie).
// The greedy look-ahead weighs a bounded number of roots per step, fewer as
// graphs grow, and a bounded number of trial steps per task, so the whole
// stays near-linear. On a graph of ten thousand nodes or more, independent
// analyses and the first two greedy sequences run at once on the threads of
// the calling thread's oneTBB task arena; the order is the same either way.
//
// `order_pressure` measures an order the way `dask.order.diagnostics` does: the
// largest number of results held when the nodes run one at a time in priority
// order. `sync_pressure` predicts what get_sync holds with an order.
//
// @code
//   std::vector<uint32_t> prio = tessera::order(g);   // prio[id], a permutation of 0..n-1
//   uint32_t held = tessera::order_pressure(g, prio); // lower is better
// @endcode
//
// Thread-safe: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <vector>

#include <span>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"

namespace tessera {

//! Priority of each node: index = compiled id, value = rank (0 runs first); a
//! permutation of 0..n-1 that respects dependencies. Throws MissingKeyError for
//! a dependency that is not a key and CycleError for a cycle.
std::vector<uint32_t> order(const Graph& g);
//! The same, reusing a compiled form of `g`.
std::vector<uint32_t> order(const Graph& g, const CompiledGraph& c);

//! dask's `diagnostics` max pressure: run the nodes one at a time in the order
//! of `priorities` (one per compiled id); after each node, every dependency
//! whose dependents have all run is released; a node without dependents is not
//! held. Returns the largest number held just before a node runs.
//! Throws ValueError when `priorities` has the wrong size.
uint32_t order_pressure(const CompiledGraph& c, std::span<const uint32_t> priorities);
//! The same, compiling `g` first.
uint32_t order_pressure(const Graph& g, std::span<const uint32_t> priorities);

//! The largest number of results get_sync holds running `g` with
//! `priorities`, without running anything: only what `outputs` need runs (all
//! of `g` when `outputs` is empty), with dask get_async's rules (a LIFO
//! ready stack; the tasks one completion makes ready pushed so the best
//! priority pops first; a result dropped once its last dependent has run,
//! unless it is in `outputs`), counted after each task; literals are data and
//! aliases are resolved to their targets, as the schedulers do. Throws
//! ValueError when `priorities` has the wrong size.
uint32_t sync_pressure(const Graph& g, const CompiledGraph& c, std::span<const uint32_t> priorities,
                       std::span<const Key> outputs = {});

}  // namespace tessera
