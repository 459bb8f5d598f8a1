// tessera/scheduler/callbacks.hpp — watching a run: RunState and Callbacks.
//
// A run calls four hooks, as dask's scheduler does: `start` once before any task,
// `pretask` just before a task runs, `posttask` just after it finished, and
// `finish` once at the end — always, also when the run failed (its flag says so).
// Several sets combine: each hook of each set is called, in the order of
// `GetOptions::callbacks`. Hooks never run concurrently with each other (one lock
// per run serializes them), so a set needs no locking of its own; `pretask` and
// `posttask` run on the worker's thread and receive its id (0 is the caller).
// A run without callbacks pays nothing for them.
//
// A run with a memory limit also calls `spill` after it moved a result to disk
// or brought one back (the profiler draws these as their own events).
//
// `RunState` is what a hook sees: the tasks (by dense id), how many finished, and
// the memory the results hold right now and at most. Its counters are atomic, so
// a hook may also hand the RunState to a thread of its own that samples it until
// `finish` (see diagnostics::ResourceProfiler).
//
// @code
//   tessera::Callbacks log;
//   log.posttask = [](const tessera::RunState& s, uint32_t task, const tessera::Value&, int worker) {
//     std::cout << s.key(task) << " on worker " << worker << ", held " << s.held_bytes() << "\n";
//   };
//   tessera::get(g, "w", {.callbacks = {log}});
// @endcode
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>

#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

class Plan;

//! A run as its callbacks see it. Thread-safe: every accessor may be called from
//! any thread between `start` and the end of `finish`.
class RunState {
 public:
  RunState(const RunState&) = delete;
  RunState& operator=(const RunState&) = delete;

  //! The graph being run.
  const Graph& graph() const;
  //! Number of tasks this run executes; a task's id in the hooks is dense,
  //! 0..num_tasks()-1 (the plan's id, not the graph's).
  size_t num_tasks() const;
  //! The key of task id `task`.
  const Key& key(uint32_t task) const;
  //! The task of id `task` (its function_name() labels profiles).
  const Task& task(uint32_t task) const;
  //! The order priority of id `task` (0 runs first).
  uint32_t priority(uint32_t task) const;
  //! Number of workers of the run (1 for get_sync).
  int num_workers() const { return num_workers_; }

  //! Tasks that ran to completion so far.
  size_t num_finished() const { return finished_.load(std::memory_order_relaxed); }
  //! Task results held right now (requested ones included, literals and cache
  //! entries excluded), counted after each task's released inputs were dropped.
  size_t held_count() const { return held_count_.load(std::memory_order_relaxed); }
  //! Bytes of those results (Value::nbytes).
  size_t held_bytes() const { return held_bytes_.load(std::memory_order_relaxed); }
  //! The most results held at once so far (docs/graph-format.md's `sync_max_held` for get_sync).
  size_t peak_count() const { return peak_count_.load(std::memory_order_relaxed); }
  //! The most bytes held at once so far.
  size_t peak_bytes() const { return peak_bytes_.load(std::memory_order_relaxed); }
  //! GetOptions::memory_limit (0: none).
  size_t memory_limit() const { return memory_limit_; }
  //! Bytes written to disk so far, results spilled, results brought back.
  size_t spilled_bytes() const { return spilled_bytes_.load(std::memory_order_relaxed); }
  //! Results spilled to disk so far.
  size_t spill_count() const { return spill_count_.load(std::memory_order_relaxed); }
  //! Results brought back so far.
  size_t reload_count() const { return reload_count_.load(std::memory_order_relaxed); }
  //! True once a task failed or the run was cancelled: nothing new starts.
  bool stopping() const { return stopping_.load(std::memory_order_relaxed); }

 //! @cond
 protected:
  RunState(const Plan& plan, int num_workers) : plan_(&plan), num_workers_(num_workers) {}
  ~RunState() = default;

  const Plan* plan_;
  int num_workers_;
  std::atomic<size_t> finished_{0};
  std::atomic<size_t> held_count_{0}, held_bytes_{0}, peak_count_{0}, peak_bytes_{0};
  std::atomic<bool> stopping_{false};
  size_t memory_limit_ = 0;
  std::atomic<size_t> spilled_bytes_{0}, spill_count_{0}, reload_count_{0};
 //! @endcond
};

//! A result moved to disk or brought back, as the `spill` hook sees it.
struct SpillEvent {
  //! Spill (to disk) or reload (back to memory).
  enum class Kind { spill, reload };
  //! Which of the two happened.
  Kind kind;
  uint32_t task;  //!< the task whose result moved (a dense id)
  size_t bytes;   //!< its accounted size (Value::nbytes)
  int worker;     //!< the worker that did it
  //! When the move began and ended.
  //! @{
  std::chrono::steady_clock::time_point start, end;
  //! @}
};

//! One set of hooks; any of them may be empty.
struct Callbacks {
  //! Once, before the first task runs.
  std::function<void(const RunState&)> start;
  //! Before task `task` runs, on the thread of worker `worker`.
  std::function<void(const RunState& state, uint32_t task, int worker)> pretask;
  //! After task `task` finished with `result` and its released inputs were dropped.
  std::function<void(const RunState& state, uint32_t task, const Value& result, int worker)> posttask;
  //! After a result was spilled or reloaded, on the thread of the worker that did it.
  std::function<void(const RunState& state, const SpillEvent& event)> spill;
  //! Once at the end; `failed` is true when a task failed or the run was cancelled.
  std::function<void(const RunState& state, bool failed)> finish;
};

}  // namespace tessera
