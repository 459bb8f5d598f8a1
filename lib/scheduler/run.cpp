#include "run.hpp"

#include <algorithm>
#include <thread>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define TESSERA_CPU_RELAX() _mm_pause()
#else
#define TESSERA_CPU_RELAX() std::this_thread::yield()
#endif

namespace tessera {

const Graph& RunState::graph() const { return plan_->graph(); }
size_t RunState::num_tasks() const { return plan_->num_tasks(); }
const Key& RunState::key(uint32_t task) const { return plan_->key(task); }
const Task& RunState::task(uint32_t task) const { return plan_->task(task); }
uint32_t RunState::priority(uint32_t task) const { return plan_->priority(task); }

namespace detail {

Run::Run(const Plan& plan, const GetOptions& options, int num_workers)
    : RunState(plan, num_workers), plan_(plan), options_(options), ledger_(plan),
      narrowing_(num_workers > 1 && !has_task_hooks(options.callbacks)), budget_(options.memory_limit),
      hooks_(options.callbacks) {
  if (budget_.limit > 0) prepare_budget();
  if (options.inbox != nullptr || !plan.inbox_keys().empty()) attach_inbox();
}

bool Run::start() { return hooks_.start(*this); }

// This file reads in the loop's order, as dask's get_async does: work, then a
// task's run and completion (complete: finish_task outside the lock; under it
// settle_locked, collect_ready, push_locked, pop_locked), then idling and
// waking, then failing. The budget's branches are in run_budget.cpp, an
// inbox's in run_inbox.cpp.
//
// The one loop. Without a budget every step is Step::task until the run is over;
// under the budget a pop may hand io to do first (inputs to bring back, victims
// to write), which do_io does outside the lock.
void Run::work(int worker) noexcept {
  Worker w(worker);
  if (budget_.limit > 0) w.log = &budget_.logs[static_cast<size_t>(worker)];
  uint32_t task = 0;
  Step step;
  {
    Lock lk(ledger_.lock);
    step = pop_locked(lk, w, task);
  }
  const bool lead = narrowing_.may() && worker == 0;
  Narrowing::Pace p;
  if (lead) p.start = Narrowing::Pace::Clock::now();
  for (;;) {
    if (step != Step::task) {
      if (step == Step::over) {
        abandon_io(w.io);
        return;
      }
      if (!do_io(w, step == Step::io_then_task)) return;
      if (step == Step::io) {
        Lock lk(ledger_.lock);
        --budget_.io_busy;
        step = pop_locked(lk, w, task);
        continue;
      }
    }
    if (hooks_.on_tasks() && !call_pretask(task, worker)) return;
    Value result;
    if (!run_task(task, result)) return;
    step = complete(w, task, std::move(result), task);
    if (lead && step == Step::task) narrowing_.pace(p, w.waits, *this);
  }
}

bool Run::run_task(uint32_t task, Value& result) {
  const auto deps = plan_.dependencies(task);
  try {
    result = plan_.task(task).run([&](size_t i) -> const Value& { return ledger_.values[deps[i]]; });
    return true;
  } catch (const ArgumentTypeError&) {
    fail(Failure::Kind::argument_type, task, std::current_exception());
  } catch (...) {
    fail(Failure::Kind::task, task, std::current_exception());
  }
  return false;
}

// Settles the finished task, pushes what it made ready and pops the next, all in
// one critical section (with task hooks, posttask runs between the settling and
// the rest). Settled before any dependent can become ready: a dependent that
// another input's completion makes ready may run, and release this result, at
// once; released before it was counted, it would take the bytes held below
// zero. Made ready and pushed in one critical section: the switch to the budget
// reads a task whose inputs are all done and that is neither ready nor settled
// as one running.
Run::Step Run::complete(Worker& w, uint32_t task, Value result, uint32_t& next) {
  // posttask sees the value the task returned: once settled, the result may be
  // spilled by another worker (ledger_.values[task] emptied) while the hooks run.
  Value returned;
  if (hooks_.on_tasks()) returned = result;
  const Settle s = finish_task(w, task, std::move(result));
  Step step;
  if (hooks_.on_tasks()) {
    // posttask sees the run after this task, before any of its dependents starts.
    {
      std::lock_guard lk(ledger_.lock);
      settle_locked(w, s);
    }
    if (!call_posttask(task, returned, w.id)) return Step::over;
    returned = Value();  // before its readers can start: the last of them releases it
    Lock lk(ledger_.lock);
    // Under a limit a result for other ranks keeps a use until it was sent (release_sent_locked).
    if (budget_.limit == 0 && ledger_.uses[task].load(std::memory_order_relaxed) == 0) drop_unread_locked(task, w.io);
    ledger_.collect_ready(task, w.ready);
    step = push_and_pop_locked(lk, w, next);
  } else {
    Lock lk = lock_after(w);
    settle_locked(w, s);
    ledger_.collect_ready(task, w.ready);
    step = push_and_pop_locked(lk, w, next);
  }
  // Under the budget the inputs this task released go back to the system too.
  if (budget_.limit > 0 && budget_.on.load(std::memory_order_relaxed)) {
    return_cached_memory_past_allowance(s.released_bytes);
  }
  return step;
}

// The lock for a completion, counting the times another worker held it: how often
// the workers meet at the lock says whether running alone could be faster.
Run::Lock Run::lock_after(Worker& w) {
  Lock lk(ledger_.lock, std::try_to_lock);
  if (!lk.owns_lock()) {
    ++w.waits;
    lk.lock();
  }
  return lk;
}

// Outside the lock: the result stored, the inputs whose last reader this task
// was released. With a memory limit, the inputs are summed (while this task
// still holds them) where inputs and result together could pass the limit:
// under the budget always; before it, only for a result larger than limit -
// target, since until the switch the bytes held, this task's inputs among them,
// stay under the target.
// Inlined into complete(): as a call, passing the result and the figures costs
// a run of tiny tasks a few percent.
[[gnu::always_inline]] inline Run::Settle Run::finish_task(Worker& w, uint32_t task, Value result) {
  Settle s{task, result.nbytes()};
  if (budget_.limit > 0 &&
      (s.bytes > budget_.limit - budget_.target_bytes || budget_.on.load(std::memory_order_relaxed))) {
    s.inputs = inputs_bytes(w, task);
  }
  ledger_.values[task] = std::move(result);
  ledger_.release_inputs(task, s.released, s.released_bytes);
  return s;
}

// The bytes of the task's inputs, each counted once, while the task holds them
// (under the budget they are pinned, so resident). In the worker's own buffer,
// outside the lock. Out of line, so that finish_task stays small enough to be
// inlined into the loop without a limit.
[[gnu::noinline, gnu::cold]] size_t Run::inputs_bytes(Worker& w, uint32_t task) {
  const uint32_t nt = plan_.num_tasks();
  const auto deps = plan_.dependencies(task);
  w.distinct.assign(deps.begin(), deps.end());
  std::sort(w.distinct.begin(), w.distinct.end());
  w.distinct.erase(std::unique(w.distinct.begin(), w.distinct.end()), w.distinct.end());
  size_t total = 0;
  for (uint32_t d : w.distinct) {
    if (d < nt) total += ledger_.values[d].nbytes();
  }
  return total;
}

// With the lock held: the task's accounting. With a memory limit, a task whose
// inputs and result together pass it stops the run; before the switch the task
// goes into the worker's ledger and the run switches to its budget when the
// bytes held pass the target; under the budget, settle_budget_locked.
void Run::settle_locked(Worker& w, const Settle& s) {
  if (budget_.limit > 0) {
    if (deliveries_.awaits_send(s.task)) ++deliveries_.unsent_results;
    // Inputs are held until this settle, so the bytes held bound them.
    if (s.inputs + s.bytes > budget_.limit) {
      memory_error_locked(s.task, s.inputs + s.bytes, "for its inputs and its result together");
    }
    if (budget_.on.load(std::memory_order_relaxed)) {
      settle_budget_locked(s, w.io);
      return;
    }
    w.log->settled[w.log->count++] = {s.task, s.bytes};
  }
  account(s.bytes, s.released, s.released_bytes);
  if (budget_.limit > 0 && held_bytes_.load(std::memory_order_relaxed) > budget_.target_bytes) switch_to_budget();
}

// With the lock held: one more task finished; its result is held, its released inputs are not.
void Run::account(size_t bytes, size_t released_count, size_t released_bytes) {
  constexpr auto relaxed = std::memory_order_relaxed;
  finished_.store(finished_.load(relaxed) + 1, relaxed);
  const size_t count = held_count_.load(relaxed) + 1 - released_count;
  const size_t total = held_bytes_.load(relaxed) + bytes - released_bytes;
  held_count_.store(count, relaxed);
  held_bytes_.store(total, relaxed);
  if (count > peak_count_.load(relaxed)) peak_count_.store(count, relaxed);
  if (total > peak_bytes_.load(relaxed)) peak_bytes_.store(total, relaxed);
}

// With lk held, after the settling: pushes what the task made ready (onto the
// stack, or under the budget into its tiers) and pops the next.
Run::Step Run::push_and_pop_locked(Lock& lk, Worker& w, uint32_t& next) {
  --ledger_.running;
  push_locked(w);
  return pop_locked(lk, w, next);
}

// With the lock held: what the completion made ready, onto the stack or into the tiers.
inline void Run::push_locked(Worker& w) {
  if (!stopping_.load(std::memory_order_relaxed)) {
    if (budget_.on.load(std::memory_order_relaxed)) {
      push_budget_locked(w);
    } else {
      ledger_.stack.insert(ledger_.stack.end(), w.ready.begin(), w.ready.end());
      // This worker pops one itself; wake the others only for the rest.
      if (w.ready.size() > 1) wake_locked(false);
    }
  }
  w.ready.clear();
}

// With lk held: the next task, io to do first, or Step::over when the run is
// over for this worker.
Run::Step Run::pop_locked(Lock& lk, Worker& w, uint32_t& next) {
  for (;;) {
    if (stopping_.load(std::memory_order_relaxed) || done_) return Step::over;
    if (options_.cancel.cancelled()) {
      stop_locked({Failure::Kind::cancelled, 0, nullptr});
      return Step::over;
    }
    if (deliveries_.inbox != nullptr && !poll_inbox_locked(w)) return Step::over;
    if (budget_.on.load(std::memory_order_relaxed)) {
      Step step;
      if (pop_budget_locked(w, next, step)) return step;
    } else if (w.id != 0 && narrowing_.may() && narrowing_.narrow()) {
      wake_locked(false);  // worker 0 may be waiting for what this worker just pushed
      lk.unlock();
      narrowing_.park(budget_.on);
      lk.lock();
      continue;
    } else if (!ledger_.stack.empty()) {
      next = ledger_.stack.back();
      ledger_.stack.pop_back();
      ++ledger_.running;
      // Values a send or a completion released (drop_unread_locked) go outside the lock.
      return w.io.discard.empty() ? Step::task : Step::io_then_task;
    }
    if (!idle_locked(lk)) return Step::over;
  }
}

// With lk held and nothing to pop: false when the run is over (finished, or the
// rest waits on a cycle); else sleeps until something changed. With nothing
// running and inbox keys pending, or results whose send would make room for
// the tasks left (admit_locked), only a delivery or a send, a failure or a
// cancellation can change anything: this worker watches the inbox, waking
// every 10 ms to notice a cancellation (the token cannot wake anyone).
bool Run::idle_locked(Lock& lk) {
  if (ledger_.running == 0 && budget_.io_busy == 0) {
    if (deliveries_.pending > 0 || (deliveries_.unsent_results > 0 && num_finished() < plan_.num_tasks())) {
      const size_t seen = deliveries_.taken;
      lk.unlock();
      deliveries_.inbox->wait(seen, std::chrono::milliseconds(10));
      lk.lock();
      return true;
    }
    if (num_finished() == plan_.num_tasks()) {
      done_ = true;
      wake_locked(true);
      if (narrowing_.may()) narrowing_.set(false);
    } else {
      stop_locked({Failure::Kind::cycle, 0, nullptr});
    }
    return false;
  }
  sleep_locked(lk);
  return true;
}

// With lk held: releases it until another worker wakes the sleepers
// (wake_locked) or a delivery bumps the epoch, then takes it again. The epoch
// is read before the inbox is looked at (InboxState::wake_locked says why).
void Run::sleep_locked(Lock& lk) {
  const uint32_t epoch = epoch_.load(std::memory_order_seq_cst);
  const size_t taken = deliveries_.taken;
  ++sleepers_;
  lk.unlock();
  if (deliveries_.inbox == nullptr || !inbox_news(taken)) wait_for_change(epoch);
  lk.lock();
  --sleepers_;
}

// Tiny tasks finish within microseconds, so spin first; sleep in
// std::atomic::wait only when the wait is long (a worker woken from a kernel
// wait for every short gap would spend more time waking than working).
void Run::wait_for_change(uint32_t epoch) const {
  for (int i = 0; i < 4000; ++i) {
    if (epoch_.load(std::memory_order_relaxed) != epoch) return;
    TESSERA_CPU_RELAX();
  }
  for (int i = 0; i < 16; ++i) {
    if (epoch_.load(std::memory_order_relaxed) != epoch) return;
    std::this_thread::yield();
  }
  epoch_.wait(epoch, std::memory_order_relaxed);
}

// With the lock held: wakes waiting workers (always, or when there is work for them).
void Run::wake_locked(bool always) {
  if (sleepers_ == 0 || (!always && ledger_.stack.empty())) return;
  epoch_.fetch_add(1, std::memory_order_relaxed);
  epoch_.notify_all();
}

// With the lock held: each value delivered since the last look completes its
// task as a run task does, without running it (no hooks): stored, settled,
// its readers pushed. Values of keys the request does not need are dropped.
void Run::take_deliveries_locked(Worker& w) {
  deliveries_.taken = deliveries_.inbox->take(deliveries_.taken, deliveries_.arrivals);
  for (auto& [i, value] : deliveries_.arrivals) {
    if (i >= deliveries_.task_of.size()) {  // a result for other ranks was sent
      if (!stopping_.load(std::memory_order_relaxed)) release_sent_locked(i - deliveries_.task_of.size(), w);
      continue;
    }
    const uint32_t task = deliveries_.task_of[i];
    if (task == Deliveries::kNoTask || stopping_.load(std::memory_order_relaxed)) continue;
    ledger_.waiting[task].store(0, std::memory_order_relaxed);
    --deliveries_.pending;
    const Settle s = finish_task(w, task, std::move(value));
    settle_locked(w, s);
    ledger_.collect_ready(task, w.ready);
    push_locked(w);
  }
  deliveries_.arrivals.clear();
  // Each push woke others only for a second ready task; this worker pops one.
  if (ledger_.stack.size() > 1) wake_locked(false);
}

void Run::fail(Failure::Kind kind, uint32_t task, std::exception_ptr error) {
  std::lock_guard lk(ledger_.lock);
  --ledger_.running;
  stop_locked({kind, task, std::move(error)});
}

// With the lock held: the first failure stops the run; later ones are dropped.
void Run::stop_locked(Failure failure) {
  if (stopping_.load(std::memory_order_relaxed)) return;
  failure_ = std::move(failure);
  stopping_.store(true, std::memory_order_relaxed);
  wake_locked(true);
  if (narrowing_.may()) narrowing_.set(false);
}

// A hook that throws stops the run as a failed task does.
bool Run::call_pretask(uint32_t task, int worker) {
  try {
    hooks_.pretask(*this, task, worker);
    return true;
  } catch (...) {
    fail(Failure::Kind::callback, task, std::current_exception());
    return false;
  }
}

bool Run::call_posttask(uint32_t task, const Value& result, int worker) {
  try {
    hooks_.posttask(*this, task, result, worker);
    return true;
  } catch (...) {
    fail(Failure::Kind::callback, task, std::current_exception());
    return false;
  }
}

}  // namespace detail
}  // namespace tessera
