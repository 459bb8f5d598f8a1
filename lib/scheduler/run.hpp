// The state machine of dask's get_async, shared by get_sync and get: one Run is
// one execution of a Plan, and every worker (get_sync: the caller alone) runs
// Run::work, one loop: take the result, settle it, push what became ready, pop
// the next. Settling, pushing and popping each branch once on whether the
// memory budget is on (run_budget.cpp): the ready stack, or the budget's tiers
// with admission. docs/scheduler.md explains the algorithm and its reasons.
//
// Its state is cut by concern, each part a class with its own header: the
// Ledger (counts, results, the ready stack, the lock: run_ledger.hpp), the
// Budget (run_budget.hpp), the Hooks (run_hooks.hpp), the Deliveries of an
// inbox (run_inbox.hpp) and Narrowing (run_narrowing.hpp). Run itself keeps
// only what makes workers wait and stop: the sleepers, the epoch they sleep on,
// whether the run is done, and why it failed.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "tessera/scheduler/callbacks.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"
#include "run_budget.hpp"
#include "run_hooks.hpp"
#include "run_inbox.hpp"
#include "run_ledger.hpp"
#include "run_narrowing.hpp"

namespace tessera::detail {

//! Why a run stopped early.
struct Failure {
  enum class Kind { none, task, argument_type, callback, cancelled, cycle, error };
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
  // A finished task's figures, from its completion to its settling under the lock.
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
    Budget::Log* log = nullptr;      // with a memory limit, before the switch
    uint32_t waits = 0;              // completions that found the lock taken (lock_after)
  };
  // What a worker does next: run `next`; do its io, then run `next` (inputs to
  // bring back, files to drop); do io without a task (victims to write while no
  // task fits); or stop, the run being over for it.
  enum class Step : uint8_t { task, io_then_task, io, over };
  using Lock = std::unique_lock<SpinLock>;
  Lock lock_after(Worker& w);

  // The loop (run.cpp); each step branches once on budget_.on.
  Step complete(Worker& w, uint32_t task, Value result, uint32_t& next);
  Settle finish_task(Worker& w, uint32_t task, Value result);
  size_t inputs_bytes(Worker& w, uint32_t task);
  void settle_locked(Worker& w, const Settle& s);
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
  void account(size_t bytes, size_t released_count, size_t released_bytes);
  void fail(Failure::Kind kind, uint32_t task, std::exception_ptr error);
  void stop_locked(Failure failure);
  void wake_locked(bool always);
  bool call_pretask(uint32_t task, int worker);
  bool call_posttask(uint32_t task, const Value& result, int worker);
  void rerun_failed_task();
  void release_all();
  [[noreturn]] void throw_failure() const;

  // The budget (run_budget.cpp): the loop's branches when budget_.on is set.
  void prepare_budget();
  void switch_to_budget();
  void return_cached_memory_past_allowance(size_t freed);
  void settle_budget_locked(const Settle& s, Io& io);
  void push_budget_locked(Worker& w);
  bool pop_budget_locked(Worker& w, uint32_t& next, Step& step);
  void push_ready_locked(uint32_t task);
  void promote_locked(uint32_t node);
  Budget::Tier classify(uint32_t task) const;
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
  void fail_io(bool counted, std::exception_ptr error);
  void abandon_io(Io& io);
  void add_held_locked(size_t bytes);
  void memory_error_locked(uint32_t task, size_t needed, const std::string& why);
  void reload_requested();
  void spill_event(SpillEvent::Kind kind, uint32_t node, int worker, std::chrono::steady_clock::time_point t0);

  // The run's state, by concern; each has its header's comment.
  const Plan& plan_;
  const GetOptions& options_;
  Ledger ledger_;  // counts, results, the ready stack and the lock

  // The loop's own, guarded by the ledger's lock.
  uint32_t sleepers_ = 0;
  bool done_ = false;
  Failure failure_;
  alignas(64) std::atomic<uint32_t> epoch_{0};  // bumped to wake sleepers (std::atomic::wait)

  Deliveries deliveries_;  // after epoch_: its link detaches the inbox first
  Narrowing narrowing_;
  Budget budget_;
  Hooks hooks_;
};

}  // namespace tessera::detail
