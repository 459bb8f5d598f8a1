// tessera/scheduler/plan.hpp — a graph prepared for running: culled, ordered, dense.
//
// Before a run, the schedulers keep only what the requested keys need (cull),
// resolve aliases to their targets, take precomputed values from the cache, give
// every node a dense id (the tasks first: 0..num_tasks()-1, then the literals
// and cached values) and a priority from `order`, and lay the edges out as CSR
// arrays. `get(graph, keys)` builds a Plan and runs it; building one yourself
// runs the same graph several times without redoing that work, and separates
// the cost of running from the cost of preparing (bench/ measures both).
//
// A caller that has already compiled and ordered the graph (a tool that also
// reports on the order) hands both in, and the Plan reuses them instead of
// compiling and ordering again.
//
// A Plan refers to the Graph's tasks: the Graph must outlive it, unchanged.
//
// On a graph of ten thousand nodes or more, the constructor runs independent
// parts (the order beside the edges' layout, and order()'s own analyses) at
// once on the threads of the calling thread's oneTBB task arena; inside a
// one-thread arena it uses only the caller's thread. The Plan is the same
// either way.
//
// @code
//   tessera::Plan plan(g, "w");
//   for (int i = 0; i < 3; ++i) tessera::get(plan).as<int>();   // no re-culling, no re-ordering
//   const tessera::CompiledGraph c = tessera::compile(g);
//   tessera::Plan same(g, c, tessera::order(g, c), "w");       // compiled and ordered once
// @endcode
//
// Thread-safe: immutable once built; several runs may use one Plan at once.
#pragma once

#include <cstdint>
#include <vector>

#include <span>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"

namespace tessera {

//! A request prepared for a run: the graph culled to the keys, ordered, its edges as dense ids (see the file comment).
class Plan {
 public:
  //! Prepares `keys` of `g`; `cache` entries (keys of `g`) replace their nodes.
  //! `inbox` keys (of `g`, none in `cache`) become tasks without inputs that an
  //! Inbox delivers (inbox.hpp): what only they read is culled. Throws
  //! MissingKeyError for a requested key or a dependency that is not a key of
  //! `g`, CycleError for aliases that refer to each other, and ValueError for an
  //! inbox key that is not a key of `g` or is in `cache`.
  Plan(const Graph& g, Keys keys, const Cache& cache = {}, std::span<const Key> inbox = {});
  //! The same, reusing `c` (compile(g)) and `priorities` (one per id of `c`,
  //! such as order(g, c)) instead of compiling and ordering again. The tasks the
  //! request needs keep their relative order from `priorities`; empty
  //! `priorities` let the Plan order as the constructor above does. Throws
  //! ValueError when `c` or non-empty `priorities` do not have one
  //! entry per node of `g`.
  Plan(const Graph& g, const CompiledGraph& c, std::span<const uint32_t> priorities, Keys keys,
       const Cache& cache = {}, std::span<const Key> inbox = {});

  //! The graph the plan was made from.
  const Graph& graph() const { return *graph_; }
  //! The request, as given.
  const Keys& keys() const { return keys_; }
  //! Tasks to run: ids 0..num_tasks()-1.
  uint32_t num_tasks() const { return num_tasks_; }
  //! Nodes: the tasks, then the values known before the run (literals, cache).
  uint32_t size() const { return static_cast<uint32_t>(graph_id_.size()); }
  //! The key of node `id`.
  const Key& key(uint32_t id) const { return graph_->key(graph_id_[id]); }
  //! The node's id in the Graph (its insertion position).
  uint32_t graph_id(uint32_t id) const { return graph_id_[id]; }
  //! The task of node `id` < num_tasks().
  const Task& task(uint32_t id) const { return *tasks_[id]; }
  //! The value of node `id` >= num_tasks() (a literal or a cached value).
  const Value& known(uint32_t id) const { return known_[id - num_tasks_]; }
  //! The `order` priority of task `id` (smaller runs first).
  uint32_t priority(uint32_t id) const { return priority_[id]; }
  //! Nodes task `id` reads, one per entry of Task::dependencies() (aliases resolved).
  std::span<const uint32_t> dependencies(uint32_t id) const { return deps_[id]; }
  //! Tasks that read node `id`, once per reading (a task reading it twice is listed twice).
  std::span<const uint32_t> dependents(uint32_t id) const { return dependents_[id]; }
  //! For each requested key (Keys::flatten order), its node.
  const std::vector<uint32_t>& requested() const { return requested_; }
  //! True when node `id` was requested (its result is never released).
  bool is_requested(uint32_t id) const { return requested_mask_[id] != 0; }
  //! Dependencies of task `id` that are tasks: what it waits for.
  uint32_t num_waiting(uint32_t id) const { return waiting_[id]; }
  //! The tasks ready at the start, best priority last (the top of the stack).
  const std::vector<uint32_t>& initial_ready() const { return initial_ready_; }
  //! The inbox keys the Plan was made for, as given.
  const std::vector<Key>& inbox_keys() const { return inbox_keys_; }
  //! The tasks an Inbox delivers (the inbox keys the request needs): no
  //! dependencies, never in initial_ready(), never run.
  const std::vector<uint32_t>& inbox_tasks() const { return inbox_tasks_; }

 private:
  const Graph* graph_;
  Keys keys_;
  uint32_t num_tasks_ = 0;
  std::vector<uint32_t> graph_id_;
  std::vector<const Task*> tasks_;
  std::vector<Value> known_;
  std::vector<uint32_t> priority_;
  Csr deps_, dependents_;
  std::vector<uint32_t> requested_;
  std::vector<uint8_t> requested_mask_;
  std::vector<uint32_t> waiting_;
  std::vector<uint32_t> initial_ready_;
  std::vector<Key> inbox_keys_;
  std::vector<uint32_t> inbox_tasks_;

  friend class PlanBuilder;
};

}  // namespace tessera
