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

namespace {

// Counts `c` one down; true when that was the last. A count at 1 has one
// count-down left, the caller's, so nobody else writes it: an acquiring load
// (it sees the earlier count-downs and what came before them) and a plain
// store do what the read-modify-write did. The lock-prefixed instruction costs
// more than the rest of a tiny task's bookkeeping around it, and the last
// count-down is every chain link's, half a binary reduction's, and one in
// three of a 3-point stencil's.
bool count_down(std::atomic<uint32_t>& c) {
  if (c.load(std::memory_order_acquire) == 1) {
    c.store(0, std::memory_order_relaxed);
    return true;
  }
  return c.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

}  // namespace

Run::Run(const Plan& plan, const GetOptions& options, int num_workers)
    : RunState(plan, num_workers), plan_(plan), options_(options), limit_(options.memory_limit) {
  for (const Callbacks& cb : options.callbacks) {
    task_hooks_ |= cb.pretask || cb.posttask;
    spill_hooks_ |= static_cast<bool>(cb.spill);
  }
  const uint32_t m = plan.size(), nt = plan.num_tasks();
  waiting_ = std::make_unique<std::atomic<uint32_t>[]>(nt);
  uses_ = std::make_unique<std::atomic<uint32_t>[]>(m);
  values_ = std::make_unique<Value[]>(m);
  for (uint32_t u = 0; u < nt; ++u) waiting_[u].store(plan.num_waiting(u), std::memory_order_relaxed);
  for (uint32_t u = 0; u < m; ++u) {
    uint32_t readers = static_cast<uint32_t>(plan.dependents(u).size());
    uses_[u].store(readers + (plan.is_requested(u) ? 1 : 0), std::memory_order_relaxed);
  }
  for (uint32_t u = nt; u < m; ++u) values_[u] = plan.known(u);
  stack_.reserve(nt);
  stack_ = plan.initial_ready();
  if (limit_ > 0) prepare_budget();
  may_narrow_ = num_workers > 1 && !task_hooks_;
  if (options.inbox != nullptr || !plan.inbox_keys().empty()) attach_inbox();
}

bool Run::start() {
  std::lock_guard lk(hooks_);
  try {
    for (const Callbacks& cb : options_.callbacks) {
      if (cb.start) cb.start(*this);
      ++started_;
    }
  } catch (...) {
    start_error_ = std::current_exception();
    return false;
  }
  return true;
}

// The one loop. Without a budget every step is Step::task until the run is over;
// under the budget a pop may hand io to do first (inputs to bring back, victims
// to write), which do_io does outside the lock.
void Run::work(int worker) noexcept {
  Worker w(worker);
  if (limit_ > 0) w.ledger = &ledgers_[static_cast<size_t>(worker)];
  uint32_t task = 0;
  Step step;
  {
    Lock lk(lock_);
    step = pop_locked(lk, w, task);
  }
  const bool lead = may_narrow_ && worker == 0;
  Pace p;
  if (lead) p.start = Pace::Clock::now();
  for (;;) {
    if (step != Step::task) {
      if (step == Step::over) {
        abandon_io(w.io);
        return;
      }
      if (!do_io(w, step == Step::io_then_task)) return;
      if (step == Step::io) {
        Lock lk(lock_);
        --io_busy_;
        step = pop_locked(lk, w, task);
        continue;
      }
    }
    if (task_hooks_ && !call_pretask(task, worker)) return;
    Value result;
    if (!run_task(task, result)) return;
    step = complete(w, task, std::move(result), task);
    if (lead && step == Step::task) pace(p, w);
  }
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
    if (inbox_ != nullptr && !poll_inbox_locked(w)) return Step::over;
    if (budget_.load(std::memory_order_relaxed)) {
      Step step;
      if (pop_budget_locked(w, next, step)) return step;
    } else if (w.id != 0 && may_narrow_ && narrow_.load(std::memory_order_relaxed)) {
      wake_locked(false);  // worker 0 may be waiting for what this worker just pushed
      lk.unlock();
      park();
      lk.lock();
      continue;
    } else if (!stack_.empty()) {
      next = stack_.back();
      stack_.pop_back();
      ++running_;
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
  if (running_ == 0 && io_busy_ == 0) {
    if (inbox_pending_ > 0 || (unsent_results_ > 0 && num_finished() < plan_.num_tasks())) {
      const size_t seen = inbox_taken_;
      lk.unlock();
      inbox_->wait(seen, std::chrono::milliseconds(10));
      lk.lock();
      return true;
    }
    if (num_finished() == plan_.num_tasks()) {
      done_ = true;
      wake_locked(true);
      if (may_narrow_) set_narrow(false);
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
  const size_t taken = inbox_taken_;
  ++sleepers_;
  lk.unlock();
  if (inbox_ == nullptr || !inbox_news(taken)) wait_for_change(epoch);
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

// With lock_ held: wakes waiting workers (always, or when there is work for them).
void Run::wake_locked(bool always) {
  if (sleepers_ == 0 || (!always && stack_.empty())) return;
  epoch_.fetch_add(1, std::memory_order_relaxed);
  epoch_.notify_all();
}

bool Run::run_task(uint32_t task, Value& result) {
  const auto deps = plan_.dependencies(task);
  try {
    result = plan_.task(task).run([&](size_t i) -> const Value& { return values_[deps[i]]; });
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
  // spilled by another worker (values_[task] emptied) while the hooks run.
  Value returned;
  if (task_hooks_) returned = result;
  const Settle s = finish_task(w, task, std::move(result));
  Step step;
  if (task_hooks_) {
    // posttask sees the run after this task, before any of its dependents starts.
    {
      std::lock_guard lk(lock_);
      settle_locked(w, s);
    }
    if (!call_posttask(task, returned, w.id)) return Step::over;
    returned = Value();  // before its readers can start: the last of them releases it
    Lock lk(lock_);
    // Under a limit a result for other ranks keeps a use until it was sent (release_sent_locked).
    if (limit_ == 0 && uses_[task].load(std::memory_order_relaxed) == 0) drop_unread_locked(task, w.io);
    collect_ready(w, task);
    step = push_and_pop_locked(lk, w, next);
  } else {
    Lock lk = lock_after(w);
    settle_locked(w, s);
    collect_ready(w, task);
    step = push_and_pop_locked(lk, w, next);
  }
  // Under the budget the inputs this task released go back to the system too.
  if (limit_ > 0 && budget_.load(std::memory_order_relaxed)) return_cached_memory_past_allowance(s.released_bytes);
  return step;
}

// lock_ for a completion, counting the times another worker held it: how often
// the workers meet at the lock says whether running alone could be faster.
Run::Lock Run::lock_after(Worker& w) {
  Lock lk(lock_, std::try_to_lock);
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
  if (limit_ > 0 && (s.bytes > limit_ - target_bytes_ || budget_.load(std::memory_order_relaxed))) {
    s.inputs = inputs_bytes(w, task);
  }
  values_[task] = std::move(result);
  release_inputs(task, s.released, s.released_bytes);
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
    if (d < nt) total += values_[d].nbytes();
  }
  return total;
}

// With lock_ held: the task's accounting. With a memory limit, a task whose
// inputs and result together pass it stops the run; before the switch the task
// goes into the worker's ledger and the run switches to its budget when the
// bytes held pass the target; under the budget, settle_budget_locked.
void Run::settle_locked(Worker& w, const Settle& s) {
  if (limit_ > 0) {
    if (awaits_send(s.task)) ++unsent_results_;
    // Inputs are held until this settle, so the bytes held bound them.
    if (s.inputs + s.bytes > limit_) {
      memory_error_locked(s.task, s.inputs + s.bytes, "for its inputs and its result together");
    }
    if (budget_.load(std::memory_order_relaxed)) {
      settle_budget_locked(s, w.io);
      return;
    }
    w.ledger->settled[w.ledger->count++] = {s.task, s.bytes};
  }
  account(s.bytes, s.released, s.released_bytes);
  if (limit_ > 0 && held_bytes_.load(std::memory_order_relaxed) > target_bytes_) switch_to_budget();
}

// Drops each input whose last reader this task was (requested ones keep a use).
void Run::release_inputs(uint32_t task, size_t& count, size_t& bytes) {
  const uint32_t nt = plan_.num_tasks();
  for (uint32_t d : plan_.dependencies(task)) {
    if (!count_down(uses_[d])) continue;
    if (d < nt) {
      ++count;
      bytes += values_[d].nbytes();
    }
    values_[d] = Value();
  }
}

// With lock_ held: a result that nothing of this run reads any more and that
// was not requested (a result for other ranks, Run::release_sent) leaves once
// posttask handed it on, or under a limit once it was sent. Its value goes
// into the worker's io.discard, destroyed outside the lock (pop_locked hands
// the io back before the next task). Under the budget it may be on disk or
// being written (its use kept it a victim until the send): its file goes, and
// a write under way drops its file when it ends (finish_spill).
void Run::drop_unread_locked(uint32_t task, Io& io) {
  const size_t bytes = values_[task].nbytes();  // 0 when on disk
  if (budget_.load(std::memory_order_relaxed)) {
    if (node_state_[task] == kSpilling) set_leaving_locked(task, false);
    if (file_[task] >= 0) io.drop_files.push_back(file_[task]);
    file_[task] = kNoFile;
    node_state_[task] = kReleased;
  }
  io.discard.push_back(std::move(values_[task]));
  values_[task] = Value();
  held_count_.store(held_count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  held_bytes_.store(held_bytes_.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
}

// With lock_ held: the dependents this completion made ready, sorted so the
// best priority is last.
void Run::collect_ready(Worker& w, uint32_t task) {
  for (uint32_t s : plan_.dependents(task)) {
    if (count_down(waiting_[s])) w.ready.push_back(s);
  }
  if (w.ready.size() > 1) {
    std::sort(w.ready.begin(), w.ready.end(),
              [this](uint32_t a, uint32_t b) { return plan_.priority(a) > plan_.priority(b); });
  }
}

// With lock_ held: one more task finished; its result is held, its released inputs are not.
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
  --running_;
  push_locked(w);
  return pop_locked(lk, w, next);
}

// With lock_ held: what the completion made ready, onto the stack or into the tiers.
inline void Run::push_locked(Worker& w) {
  if (!stopping_.load(std::memory_order_relaxed)) {
    if (budget_.load(std::memory_order_relaxed)) {
      push_budget_locked(w);
    } else {
      stack_.insert(stack_.end(), w.ready.begin(), w.ready.end());
      // This worker pops one itself; wake the others only for the rest.
      if (w.ready.size() > 1) wake_locked(false);
    }
  }
  w.ready.clear();
}

// With lock_ held: each value delivered since the last look completes its
// task as a run task does, without running it (no hooks): stored, settled,
// its readers pushed. Values of keys the request does not need are dropped.
void Run::take_deliveries_locked(Worker& w) {
  inbox_taken_ = inbox_->take(inbox_taken_, arrivals_);
  for (auto& [i, value] : arrivals_) {
    if (i >= inbox_task_.size()) {  // a result for other ranks was sent
      if (!stopping_.load(std::memory_order_relaxed)) release_sent_locked(i - inbox_task_.size(), w);
      continue;
    }
    const uint32_t task = inbox_task_[i];
    if (task == kNoTask || stopping_.load(std::memory_order_relaxed)) continue;
    waiting_[task].store(0, std::memory_order_relaxed);
    --inbox_pending_;
    const Settle s = finish_task(w, task, std::move(value));
    settle_locked(w, s);
    collect_ready(w, task);
    push_locked(w);
  }
  arrivals_.clear();
  // Each push woke others only for a second ready task; this worker pops one.
  if (stack_.size() > 1) wake_locked(false);
}

void Run::fail(Failure::Kind kind, uint32_t task, std::exception_ptr error) {
  std::lock_guard lk(lock_);
  --running_;
  stop_locked({kind, task, std::move(error)});
}

// With lock_ held: the first failure stops the run; later ones are dropped.
void Run::stop_locked(Failure failure) {
  if (stopping_.load(std::memory_order_relaxed)) return;
  failure_ = std::move(failure);
  stopping_.store(true, std::memory_order_relaxed);
  wake_locked(true);
  if (may_narrow_) set_narrow(false);
}

// Worker 0, after each task: measures the run's rate in windows of 250 µs and
// now and then tries the other mode (docs/scheduler.md, "Narrowing").
void Run::pace(Pace& p, const Worker& w) {
  using namespace std::chrono_literals;
  lead_steps_.store(lead_steps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
  if (++p.count % 16 != 0) return;
  const Pace::Clock::time_point now = Pace::Clock::now();
  const auto elapsed = now - p.start;
  if (elapsed < 250us) return;
  const size_t finished = num_finished();
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const double rate = static_cast<double>(finished - p.finished_at_start) / seconds;
  const bool long_tasks = elapsed > 20us * p.count;
  // Running alone can only win when the workers keep meeting at the lock.
  const bool contended = 4 * (w.waits - p.waits_at_start) >= p.count;
  p.start = now;
  p.finished_at_start = finished;
  p.waits_at_start = w.waits;
  p.count = 0;
  if (long_tasks) {
    if (narrow_.load(std::memory_order_relaxed)) set_narrow(false);
    p = Pace{.waits_at_start = w.waits, .start = now, .finished_at_start = finished};
    return;
  }
  if (p.settling) {
    p.settling = false;
    return;
  }
  if (p.probing) {
    p.probing = false;
    if (rate > 1.2 * p.rate) {
      p.rate = rate;
      p.probe_every = 2;
    } else {
      set_narrow(p.mode_before);
      p.probe_every = std::min<uint32_t>(p.probe_every * 2, 64);
      p.settling = true;
    }
    p.windows_left = p.probe_every;
    return;
  }
  p.rate = rate;
  const bool narrow = narrow_.load(std::memory_order_relaxed);
  if (!narrow && !contended) return;
  if (--p.windows_left == 0) {
    p.probing = true;
    p.mode_before = narrow;
    set_narrow(!p.mode_before);
    p.settling = true;
  }
}

void Run::set_narrow(bool narrow) {
  narrow_.store(narrow, std::memory_order_relaxed);
  if (narrow) return;
  std::lock_guard g(park_mutex_);
  park_cv_.notify_all();
}

// A worker other than 0 while the run is narrow: it waits until worker 0
// widens the run, or until worker 0 finished nothing for a millisecond.
void Run::park() {
  using namespace std::chrono_literals;
  std::unique_lock g(park_mutex_);
  uint64_t seen = lead_steps_.load(std::memory_order_relaxed);
  while (narrow_.load(std::memory_order_relaxed) && !budget_.load(std::memory_order_relaxed)) {
    if (park_cv_.wait_for(g, 1ms) == std::cv_status::no_timeout) continue;
    const uint64_t steps = lead_steps_.load(std::memory_order_relaxed);
    if (steps == seen) {
      narrow_.store(false, std::memory_order_relaxed);
      park_cv_.notify_all();  // the other parked workers too
      break;
    }
    seen = steps;
  }
}

bool Run::call_pretask(uint32_t task, int worker) {
  try {
    std::lock_guard lk(hooks_);
    for (const Callbacks& cb : options_.callbacks) {
      if (cb.pretask) cb.pretask(*this, task, worker);
    }
    return true;
  } catch (...) {
    fail(Failure::Kind::callback, task, std::current_exception());
    return false;
  }
}

bool Run::call_posttask(uint32_t task, const Value& result, int worker) {
  try {
    std::lock_guard lk(hooks_);
    for (const Callbacks& cb : options_.callbacks) {
      if (cb.posttask) cb.posttask(*this, task, result, worker);
    }
    return true;
  } catch (...) {
    fail(Failure::Kind::callback, task, std::current_exception());
    return false;
  }
}

}  // namespace detail
}  // namespace tessera
