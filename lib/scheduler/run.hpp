// The state machine of dask's get_async, shared by get_sync and get.
//
// One Run is one execution of a Plan. Workers call work() concurrently (get_sync
// calls it once, on the caller's thread); each pops a task from the single LIFO
// ready stack, runs it, and completes it: the inputs whose last reader it was are
// released, the dependents it made ready are pushed sorted so the best priority
// is on top, and it pops its next task in the same critical section.
//
// Why it is fast: ids are dense; the wait and use counters are atomics touched
// outside the lock; the lock is a spin lock (tbb::spin_mutex; bench/spin_lock.cpp
// compares it with the hand-written one it replaced) held for a push, a pop and a few
// counters; a worker that finds the stack empty spins briefly before it sleeps
// on a futex; hooks cost a branch when none are set. Why it matches dask: one
// stack, LIFO, dependents of one completion pushed best-last, the first ready set
// sorted the same way, and held results counted after released inputs dropped.
#pragma once

#include <atomic>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <vector>

#include <tbb/spin_mutex.h>

#include "tessera/scheduler/callbacks.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::detail {

//! The lock of critical sections of a few dozen instructions: oneTBB's
//! test-and-test-and-set lock, which backs off with pauses and then yields (when
//! the holder was preempted, with more threads than cores).
using SpinLock = tbb::spin_mutex;

//! Why a run stopped early.
struct Failure {
  enum class Kind { none, task, argument_type, callback, cancelled, cycle };
  Kind kind = Kind::none;
  uint32_t task = 0;
  std::exception_ptr error;
};

class Run final : public RunState {
 public:
  Run(const Plan& plan, const GetOptions& options, int num_workers);

  //! Calls the start hooks; false when one threw (finish() then reports it).
  bool start();
  //! The worker loop: runs tasks until the run is over for this worker.
  void work(int worker) noexcept;
  //! Once every worker returned: reruns a failed task when asked, releases what
  //! a failed run held, calls the finish hooks, fills the stats, and returns the
  //! requested values or throws the run's error.
  Result finish();

 private:
  struct Worker {
    int id;
    std::vector<uint32_t> ready;  // made ready by the task just completed
  };
  using Lock = std::unique_lock<SpinLock>;

  bool pop_or_wait(Lock& lk, uint32_t& next);
  void wait_for_change(uint32_t epoch) const;
  bool run_task(uint32_t task, Value& result);
  bool complete(Worker& w, uint32_t task, Value result, uint32_t& next);
  void release_inputs(uint32_t task, size_t& count, size_t& bytes);
  void collect_ready(Worker& w, uint32_t task);
  void account(size_t bytes, size_t released_count, size_t released_bytes);
  bool push_and_pop(Lock& lk, Worker& w, uint32_t& next);
  void fail(Failure::Kind kind, uint32_t task, std::exception_ptr error);
  void stop_locked(Failure failure);
  void wake_locked(bool always);
  bool call_pretask(uint32_t task, int worker);
  bool call_posttask(uint32_t task, int worker);
  void rerun_failed_task();
  void release_all();
  Result collect(const Keys& keys, size_t& next) const;
  [[noreturn]] void throw_failure() const;
  std::vector<Key> find_cycle() const;

  const Plan& plan_;
  const GetOptions& options_;
  bool task_hooks_ = false;
  std::unique_ptr<std::atomic<uint32_t>[]> waiting_;  // per task: inputs not yet computed
  std::unique_ptr<std::atomic<uint32_t>[]> uses_;     // per node: readers yet to run (+1 if requested)
  std::unique_ptr<Value[]> values_;

  // Guarded by lock_.
  alignas(64) SpinLock lock_;
  std::vector<uint32_t> stack_;
  uint32_t running_ = 0;
  uint32_t sleepers_ = 0;
  bool done_ = false;
  Failure failure_;
  alignas(64) std::atomic<uint32_t> epoch_{0};  // bumped to wake sleepers

  std::mutex hooks_;  // callbacks never run concurrently
  size_t started_ = 0;  // callback sets whose start hook ran
  std::exception_ptr start_error_;
};

}  // namespace tessera::detail
