// The state machine of dask's get_async, shared by get_sync and get: one Run is
// one execution of a Plan, and every worker (get_sync: the caller alone) runs
// Run::work, one loop: take the result, settle it, push what became ready, pop
// the next. Settling, pushing and popping each branch once on whether the
// memory budget is on (run_budget.cpp): the ready stack, or the budget's tiers
// with admission. docs/scheduler.md explains the algorithm and its reasons.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include <tbb/spin_mutex.h>

#include "tessera/scheduler/callbacks.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"
#include "inbox_state.hpp"
#include "spill_store.hpp"

namespace tessera::detail {

//! The lock of critical sections of a few dozen instructions: oneTBB's
//! test-and-test-and-set lock, which backs off with pauses and then yields (when
//! the holder was preempted, with more threads than cores).
using SpinLock = tbb::spin_mutex;

//! Why a run stopped early.
struct Failure {
  enum class Kind { none, task, argument_type, callback, cancelled, cycle, error };
  Kind kind = Kind::none;
  uint32_t task = 0;
  std::exception_ptr error;
};

//! Whether return_cached_memory also hands back glibc malloc's free pages
//! (malloc_trim walks every arena: worth it only once a megabyte or more was freed).
enum class TrimHeap : bool { kNo, kYes };

//! Hands the memory oneTBB's allocator (and, with TrimHeap::kYes, glibc's malloc)
//! keeps cached for reuse back to the system (under the budget, as a run starts
//! and after a task or a spill freed results).
void return_cached_memory(TrimHeap trim);

//! The process's anonymous resident bytes (resident minus file-backed pages,
//! /proc/self/statm); 0 where that cannot be read.
size_t anonymous_resident_bytes();

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
  // With a memory limit, until the switch to the budget: the tasks each worker
  // settled and their results' bytes, in memory of its own (a per-task array
  // written by both workers would bounce cache lines between them on every
  // task), written under lock_. Room for every task, from oneTBB's allocator,
  // which hands the pages of one run's ledger to the next run's (fresh pages
  // cost a run of small tasks more than the writes). The switch reads them to
  // fill the per-task arrays below.
  struct Settled {
    uint32_t task;
    size_t bytes;
  };
  struct ScalableFree {
    void operator()(Settled* p) const;
  };
  struct alignas(64) Ledger {
    std::unique_ptr<Settled[], ScalableFree> settled;
    size_t count = 0;
  };
  // A finished task's figures, from its completion to its settling under lock_.
  // `inputs`: the bytes of its distinct inputs, summed only where they could
  // pass the limit together with the result (finish_task), else 0.
  struct Settle {
    uint32_t task = 0;
    size_t bytes = 0, inputs = 0, released = 0, released_bytes = 0;
  };
  // What a worker does outside the lock under the budget: results to write to
  // disk (with a copy of each value, taken under the lock), results to bring
  // back, results another worker brings back, files to remove, values to drop.
  struct Io {
    std::vector<std::pair<uint32_t, Value>> spill;
    std::vector<uint32_t> reload, await;
    std::vector<int64_t> drop_files;
    std::vector<Value> discard;
    bool empty() const {
      return spill.empty() && reload.empty() && await.empty() && drop_files.empty() && discard.empty();
    }
  };
  struct Worker {
    explicit Worker(int worker) : id(worker) {}
    int id;
    std::vector<uint32_t> ready;  // made ready by the task just completed
    Io io;                        // under the budget
    std::vector<uint32_t> distinct;  // inputs_bytes' buffer, kept between tasks
    Ledger* ledger = nullptr;     // with a memory limit, before the switch
    uint32_t waits = 0;           // completions that found lock_ taken (lock_after)
  };
  // What a worker does next: run `next`; do its io, then run `next` (inputs to
  // bring back, files to drop); do io without a task (victims to write while no
  // task fits); or stop, the run being over for it.
  enum class Step : uint8_t { task, io_then_task, io, over };
  using Lock = std::unique_lock<SpinLock>;
  enum : uint8_t { kWaiting, kReady, kRunning, kFinished };                 // task_state_
  enum : uint8_t { kNone, kResident, kSpilling, kSpilled, kReloading, kReleased };  // node_state_
  enum Tier : uint8_t { kReleasing, kNeutral, kAdding };
  static constexpr int64_t kNoFile = -1;       // file_: none
  static constexpr int64_t kCannotSpill = -2;  // file_: no Spillable form, or no room on disk
  struct Entry {
    uint64_t seq;
    uint32_t task;
  };

  // Worker 0's measurements for narrowing (docs/scheduler.md, "Pace").
  struct Pace {
    using Clock = std::chrono::steady_clock;
    uint32_t count = 0;            // worker 0's completions since the window started
    uint32_t waits_at_start = 0;   // Worker::waits then
    Clock::time_point start;       // of the window
    size_t finished_at_start = 0;  // the run's completions then
    bool settling = true;          // the window after a change of mode is not measured
    bool probing = false;          // this window runs the other mode
    bool mode_before = false;      // narrow_ before the probe
    double rate = 0;               // completions per second in the current mode
    uint32_t windows_left = 2, probe_every = 2;
  };
  void pace(Pace& p, const Worker& w);
  Lock lock_after(Worker& w);
  void set_narrow(bool narrow);
  void park();

  // The loop (run.cpp); each step branches once on budget_.
  Step complete(Worker& w, uint32_t task, Value result, uint32_t& next);
  Settle finish_task(Worker& w, uint32_t task, Value result);
  size_t inputs_bytes(Worker& w, uint32_t task);
  void settle_locked(Worker& w, const Settle& s);
  void collect_ready(Worker& w, uint32_t task);
  Step push_and_pop_locked(Lock& lk, Worker& w, uint32_t& next);
  void push_locked(Worker& w);
  Step pop_locked(Lock& lk, Worker& w, uint32_t& next);
  bool idle_locked(Lock& lk);
  void sleep_locked(Lock& lk);
  void wait_for_change(uint32_t epoch) const;

  // The inbox (run_inbox.cpp; take_deliveries_locked, a completion, in
  // run.cpp): a delivery completes its task in the loop.
  void attach_inbox();
  void release_sent(size_t returned);
  void release_sent_locked(size_t k, Worker& w);
  void drop_unread_locked(uint32_t task, Io& io);
  bool inbox_news(size_t taken) const;
  bool poll_inbox_locked(Worker& w);
  void take_deliveries_locked(Worker& w);
  bool run_task(uint32_t task, Value& result);
  void release_inputs(uint32_t task, size_t& count, size_t& bytes);
  void account(size_t bytes, size_t released_count, size_t released_bytes);
  void fail(Failure::Kind kind, uint32_t task, std::exception_ptr error);
  void stop_locked(Failure failure);
  void wake_locked(bool always);
  bool call_pretask(uint32_t task, int worker);
  bool call_posttask(uint32_t task, const Value& result, int worker);
  void rerun_failed_task();
  void release_all();
  Result collect(const Keys& keys, size_t& next) const;
  [[noreturn]] void throw_failure() const;
  std::vector<Key> find_cycle() const;

  // The budget (run_budget.cpp): the loop's branches when budget_ is on.
  void prepare_budget();
  void switch_to_budget();
  void return_cached_memory_past_allowance(size_t freed);
  void settle_budget_locked(const Settle& s, Io& io);
  void push_budget_locked(Worker& w);
  bool pop_budget_locked(Worker& w, uint32_t& next, Step& step);
  void push_ready_locked(uint32_t task);
  void promote_locked(uint32_t node);
  Tier classify(uint32_t task) const;
  int choose_tier();
  bool admit_locked(uint32_t task, int tier, Io& io);
  bool make_room_locked(size_t need, Io& io);
  size_t task_footprint() const;
  uint32_t next_reader(uint32_t node);
  void offer_locked(uint32_t node);
  bool do_io(Worker& w, bool counted);
  void finish_spill(Worker& w, uint32_t node, Value value, int64_t file, uint64_t written,
                    std::chrono::steady_clock::time_point t0);
  void reload(Worker& w, uint32_t node, bool counted);
  void set_leaving_locked(uint32_t node, bool leaving);
  void fail_io(bool counted, std::exception_ptr error);
  void abandon_io(Io& io);
  void add_held_locked(size_t bytes);
  void memory_error_locked(uint32_t task, size_t needed, const std::string& why);
  void reload_requested();
  void spill_event(SpillEvent::Kind kind, uint32_t node, int worker, std::chrono::steady_clock::time_point t0);

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
  alignas(64) std::atomic<uint32_t> epoch_{0};  // bumped to wake sleepers (std::atomic::wait)

  // With GetOptions::inbox (else inbox_ is null): per inbox key, its task or
  // kNoTask when the request does not need it; deliveries taken so far and the
  // inbox tasks not delivered yet (guarded by lock_).
  static constexpr uint32_t kNoTask = UINT32_MAX;
  InboxState* inbox_ = nullptr;
  std::vector<uint32_t> inbox_task_;
  size_t inbox_taken_ = 0;
  uint32_t inbox_pending_ = 0;
  std::vector<std::pair<uint32_t, Value>> arrivals_;
  // Under a memory limit, per requested key: the task whose result a send
  // releases (kNoTask: the caller's keys, past them one the caller requested too).
  std::vector<uint32_t> sent_task_;
  // Under a memory limit, per task: 1 while its result waits to be sent (the
  // sender holds a reference, so writing it out would free nothing: it is no
  // spill candidate until sent); and how many such results have finished.
  std::vector<uint8_t> awaiting_send_;
  uint32_t unsent_results_ = 0;
  bool awaits_send(uint32_t task) const { return !awaiting_send_.empty() && awaiting_send_[task] != 0; }
  // Detaches the inbox before epoch_ goes, however the run ends (the
  // constructor may throw after attaching).
  struct InboxLink {
    InboxState* state = nullptr;
    InboxLink() = default;
    InboxLink(const InboxLink&) = delete;
    InboxLink& operator=(const InboxLink&) = delete;
    ~InboxLink() {
      if (state != nullptr) state->detach();
    }
  } inbox_link_;

  // Narrowing: without task hooks, with two workers or more, until a memory
  // limit's budget takes over.
  bool may_narrow_ = false;
  alignas(64) std::atomic<bool> narrow_{false};
  std::atomic<uint64_t> lead_steps_{0};  // worker 0's completions, for parked workers
  std::mutex park_mutex_;
  std::condition_variable park_cv_;

  const size_t limit_ = 0;
  size_t target_bytes_ = 0, pause_bytes_ = 0;
  size_t base_resident_ = 0;  // anonymous_resident_bytes() as the budget was prepared
  std::unique_ptr<Ledger[]> ledgers_;  // per worker, before the switch
  // Guarded by lock_ once budget_ is set (allocated by the switch).
  std::atomic<bool> budget_{false};
  std::unique_ptr<size_t[]> bytes_;                     // per task: its result's bytes
  std::unique_ptr<std::atomic<uint8_t>[]> task_state_;  // per task; kFinished once settled
  std::vector<uint8_t> node_state_, tier_, leaving_flag_;
  std::vector<uint32_t> pins_;
  std::vector<int64_t> file_;
  std::vector<Reload> reload_;
  std::vector<uint32_t> reader_offsets_, readers_, next_reader_;  // readers by priority
  std::vector<Entry> tiers_[3];
  uint64_t seq_ = 0;
  std::vector<std::pair<uint32_t, uint32_t>> victims_;  // heap: (next reader's priority, node)
  size_t leaving_ = 0;                                  // bytes being written out
  size_t arriving_ = 0;                                 // bytes being brought back
  size_t largest_result_ = 0;                           // the largest result settled so far
  uint32_t io_busy_ = 0;                                // workers doing io without a task
  bool spill_hooks_ = false;
  std::unique_ptr<SpillStore> store_;
  std::atomic<int64_t> spill_ns_{0}, reload_ns_{0};

  std::mutex hooks_;  // callbacks never run concurrently
  size_t started_ = 0;  // callback sets whose start hook ran
  std::exception_ptr start_error_;
};

}  // namespace tessera::detail
