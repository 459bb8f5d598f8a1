// The ledger of one run, as dask's get_async keeps it in its `state`: per task
// the inputs it still waits for (`waiting`), per result the readers yet to run
// (`uses`, one more when requested), the results themselves (`values`), the
// ready stack and the count of tasks running. The loop's one lock lives here
// too, beside what it guards most often.
//
// Who touches what:
// - `waiting` and `uses` are atomics that workers count down outside the lock
//   (count_down says why the last count-down is a load and a store);
// - a value is written by the worker that ran its task, outside the lock,
//   before the task is settled; read by the readers that run after it; and
//   released by the last of them (release_inputs);
// - `stack` and `running` change only under `lock` (so do the budget's state
//   and the rest of Run's once the run is shared).
//
// Layout: the pointers, read by every worker outside the lock and never written
// once the run started, sit on a cache line apart from the lock and the stack,
// which move from core to core with every critical section.
#pragma once

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include <tbb/spin_mutex.h>

#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::detail {

//! The lock of critical sections of a few dozen instructions: oneTBB's
//! test-and-test-and-set lock, which backs off with pauses and then yields (when
//! the holder was preempted, with more threads than cores).
using SpinLock = tbb::spin_mutex;

// Counts `c` one down; true when that was the last. A count at 1 has one
// count-down left, the caller's, so nobody else writes it: an acquiring load
// (it sees the earlier count-downs and what came before them) and a plain
// store do what the read-modify-write did. The lock-prefixed instruction costs
// more than the rest of a tiny task's bookkeeping around it, and the last
// count-down is every chain link's, half a binary reduction's, and one in
// three of a 3-point stencil's.
inline bool count_down(std::atomic<uint32_t>& c) {
  if (c.load(std::memory_order_acquire) == 1) {
    c.store(0, std::memory_order_relaxed);
    return true;
  }
  return c.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

class Ledger {
  const Plan& plan_;  // first: read with the pointers below, outside the lock

 public:
  //! Every count as the Plan starts it, the known values (literals, cache
  //! entries) in place, and the Plan's first ready tasks on the stack.
  explicit Ledger(const Plan& plan);

  //! Outside the lock, once a task finished: drops each input whose last reader
  //! it was (requested ones keep a use), adding to `count` and `bytes` those of
  //! them that were task results.
  void release_inputs(uint32_t task, size_t& count, size_t& bytes) {
    const uint32_t nt = plan_.num_tasks();
    for (uint32_t d : plan_.dependencies(task)) {
      if (!count_down(uses[d])) continue;
      if (d < nt) {
        ++count;
        bytes += values[d].nbytes();
      }
      values[d] = Value();
    }
  }
  //! With the lock held: appends to `ready` the dependents this completion made
  //! ready, sorted so the best priority is last.
  void collect_ready(uint32_t task, std::vector<uint32_t>& ready) {
    for (uint32_t s : plan_.dependents(task)) {
      if (count_down(waiting[s])) ready.push_back(s);
    }
    if (ready.size() > 1) {
      std::sort(ready.begin(), ready.end(),
                [this](uint32_t a, uint32_t b) { return plan_.priority(a) > plan_.priority(b); });
    }
  }
  //! Drops every value (a failed run's end).
  void release_all();
  //! The requested values in the shape of `keys`, from the `next`th request on.
  Result collect(const Keys& keys, size_t& next) const;
  //! Once the run stalled: a cycle among the tasks that still wait, as keys,
  //! its first key repeated at its end.
  std::vector<Key> find_cycle() const;

  // Read outside the lock; the pointers never change once the run started.
  std::unique_ptr<std::atomic<uint32_t>[]> waiting;  //!< per task: inputs not yet computed
  std::unique_ptr<std::atomic<uint32_t>[]> uses;     //!< per node: readers yet to run (+1 if requested)
  std::unique_ptr<Value[]> values;                   //!< per node: its result while held

  // Guarded by `lock`.
  alignas(64) SpinLock lock;
  std::vector<uint32_t> stack;  //!< ready tasks, the best priority on top
  uint32_t running = 0;         //!< tasks popped and not yet settled
};

}  // namespace tessera::detail
