// The memory budget (GetOptions::memory_limit): the branches of Run's one loop
// taken once the bytes held first pass the target (budget_), and the switch to
// them. docs/scheduler.md explains the tiers, pins, victims and reloads.
#include <algorithm>
#include <cstdlib>

#if defined(__GLIBC__)
#include <malloc.h>
#endif

#include <absl/strings/str_cat.h>

#include <oneapi/tbb/scalable_allocator.h>

#include "run.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/not_spillable.hpp"
#include "storage/pages.hpp"

namespace tessera::detail {

using enum Budget::TaskState;
using enum Budget::NodeState;
using enum Budget::Tier;
namespace {

int64_t since_ns(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

// A spilled result's memory is only as gone as its allocator lets it be: oneTBB's
// scalable allocator (NDArray blocks of 2 to 64 MiB) keeps freed large blocks in
// a cache for the next block of their size, resident all the while, so a run
// that spills would hold its limit in results and as much again in that cache.
// glibc's malloc (Python objects, numpy arrays: tessera.get) does the same in
// its arenas: once a block of up to 32 MiB that it mapped is freed, it serves
// blocks of that size from the arenas, whose freed pages stay resident (its
// dynamic mmap threshold); malloc_trim hands the free pages back (bench/python:
// 160 MiB of a (x + x.T).sum() run under a 423 MiB limit). NDArray blocks past
// 64 MiB are mappings that a few freed ones keep (storage/pages.hpp keep_pages).
// Returned after each spill that freed a value, and after each task under the
// budget (its released inputs); tasks that hold memory worth budgeting take far
// longer than the calls. malloc_trim walks every arena (~125 us on a heap of a
// few thousand numpy blocks), so the callers ask for it only once a megabyte or
// more was freed.
void return_cached_memory(TrimHeap trim) {
  // oneTBB 2021.8 dereferences its unset pool when asked to clean before its
  // first allocation (sanitized builds, or a run without large blocks): one
  // allocation first sets it up.
  static const bool ready = [] {
    ::scalable_free(::scalable_malloc(16));
    return true;
  }();
  if (ready) ::scalable_allocation_command(TBBMALLOC_CLEAN_ALL_BUFFERS, nullptr);
  release_kept_pages();
#if defined(__GLIBC__)
  if (trim == TrimHeap::kYes) ::malloc_trim(0);
#else
  (void)trim;
#endif
}

size_t anonymous_resident_bytes() {
  const ResidentMemory m = resident_memory();
  return m.resident >= m.file_backed ? m.resident - m.file_backed : 0;
}

// The ledgers come from oneTBB's allocator, except under a sanitizer, which
// must see each allocation (storage/pages.hpp).
constexpr bool kLedgersFromTbb = !kSanitizedHeap;

void Budget::ScalableFree::operator()(Settled* p) const {
  if (kLedgersFromTbb) {
    ::scalable_free(p);
  } else {
    std::free(p);
  }
}

void Run::prepare_budget() {
  const double target = options_.memory_target, pause = options_.memory_pause;
  if (!(target > 0 && target <= pause && pause <= 1)) {
    throw Error(absl::StrCat("GetOptions: expected 0 < memory_target <= memory_pause <= 1, found memory_target ",
                             target, " and memory_pause ", pause));
  }
  if (!(options_.task_footprint >= 1)) {
    throw Error(absl::StrCat("GetOptions: expected task_footprint >= 1 (a running task holds its result at least), found ",
                             options_.task_footprint));
  }
  memory_limit_ = budget_.limit;
  budget_.target_bytes = static_cast<size_t>(static_cast<double>(budget_.limit) * options_.memory_target);
  budget_.pause_bytes = static_cast<size_t>(static_cast<double>(budget_.limit) * options_.memory_pause);
  budget_.logs = std::make_unique<Budget::Log[]>(static_cast<size_t>(num_workers_));
  for (int i = 0; i < num_workers_; ++i) {
    const size_t bytes = std::max<size_t>(plan_.num_tasks(), 1) * sizeof(Budget::Settled);
    void* p = kLedgersFromTbb ? ::scalable_malloc(bytes) : std::malloc(bytes);
    if (p == nullptr) throw std::bad_alloc();
    budget_.logs[static_cast<size_t>(i)].settled.reset(static_cast<Budget::Settled*>(p));
  }
  budget_.store = std::make_unique<SpillStore>(options_.scratch_dir, options_.disk_limit);
  // The caches start empty, so that what they kept from earlier work does not
  // pass for the process's own (return_cached_memory_past_allowance).
  return_cached_memory(TrimHeap::kYes);
  budget_.base_resident = anonymous_resident_bytes();
}

// Handing the caches back after every task and spill made each next block a
// fresh mapping: under a limit, the 4-rank FFT of bench/mpi faulted 1.3 M pages
// against 0.6 M without one, and ran 30% longer on a virtual machine where a
// fault is dear. So the caches may keep a quarter of the limit, 64 MiB at most
// (the FFT's blocks are 5 to 8 MiB; a large limit's slack stays small): they go
// back only once the process's anonymous resident bytes pass what it held as
// the run began, plus the results held now, plus that allowance. Other memory
// (messages in flight, Python objects) counts as cache here, which errs towards
// handing back.
void Run::return_cached_memory_past_allowance(size_t freed) {
  constexpr size_t kCacheAllowance = size_t{64} << 20;
  const size_t resident = anonymous_resident_bytes();
  const size_t allowance = std::min(budget_.limit / 4, kCacheAllowance);
  const size_t counted = budget_.base_resident + held_bytes_.load(std::memory_order_relaxed) + allowance;
  if (resident == 0 || resident > counted) {
    return_cached_memory(freed >= (size_t{1} << 20) ? TrimHeap::kYes : TrimHeap::kNo);
  }
}

// With the lock held, under the budget: the finished task's accounting. Its inputs
// are unpinned; those no reader needs any more are released (their files
// dropped), those with one reader left promote that reader; its result becomes a
// spill candidate. The task counts as finished only from here on, so the switch
// to the budget (under this lock) saw a task that finished but was not settled
// as one still running, whose inputs it pinned and this call unpins.
void Run::settle_budget_locked(const Settle& s, Io& io) {
  const uint32_t nt = plan_.num_tasks();
  const uint32_t task = s.task;
  budget_.bytes[task] = s.bytes;
  budget_.task_state[task].store(kFinished, std::memory_order_relaxed);
  budget_.largest_result = std::max(budget_.largest_result, s.bytes);
  for (uint32_t d : plan_.dependencies(task)) {
    if (d >= nt) continue;
    --budget_.pins[d];
    const uint32_t left = ledger_.uses[d].load(std::memory_order_relaxed);
    if (left == 0) {
      if (budget_.node_state[d] == kReleased) continue;  // read twice, or by two tasks that just finished
      budget_.node_state[d] = kReleased;
      if (budget_.file[d] >= 0) io.drop_files.push_back(budget_.file[d]);
      budget_.file[d] = Budget::kNoFile;
      continue;
    }
    if (budget_.pins[d] == 0) offer_locked(d);
    if (left == 1) promote_locked(d);
  }
  budget_.node_state[task] = kResident;
  offer_locked(task);
  account(s.bytes, s.released, s.released_bytes);
}

// With the lock held, after the settling: what the task made ready goes into the
// tiers, and victims are chosen when the bytes held, with room for the running
// tasks' results, pass the limit.
void Run::push_budget_locked(Worker& w) {
  for (uint32_t t : w.ready) push_ready_locked(t);
  // The room admit_locked kept for the results of the tasks still running stays
  // theirs: the result that just came must not take it (it would, and those
  // results would land above the limit).
  const size_t running = static_cast<size_t>(ledger_.running) * task_footprint();
  if (held_bytes_.load(std::memory_order_relaxed) + budget_.arriving + running > budget_.limit + budget_.leaving) {
    make_room_locked(running, w.io);
  }
  wake_locked(true);  // memory and pins changed: a paused worker may go on
}

// With the lock held: into `step`, the next task (its inputs pinned, those on disk
// to reload in the worker's io), io to do first (victims chosen, no task fits
// yet), or the end (the budget could not be met); false when there is nothing
// to do now.
bool Run::pop_budget_locked(Worker& w, uint32_t& next, Step& step) {
  Io& io = w.io;
  const int k = choose_tier();
  if (k >= 0) {
    const uint32_t t = budget_.tiers[k].back().task;
    const bool paused =
        k != kReleasing && ledger_.running > 0 && held_bytes_.load(std::memory_order_relaxed) >= budget_.pause_bytes;
    if (!paused && admit_locked(t, k, io)) {
      budget_.tiers[k].pop_back();
      next = t;
      budget_.task_state[next].store(kRunning, std::memory_order_relaxed);
      ++ledger_.running;
      step = io.empty() ? Step::task : Step::io_then_task;
      return true;
    }
    if (stopping_.load(std::memory_order_relaxed)) {
      step = Step::over;
      return true;
    }
  }
  // Victims chosen (here or when the last task finished) are written before
  // this worker waits: others may be waiting for that room, and a worker
  // asleep with io in hand counts as neither running nor busy.
  if (!io.empty()) {
    ++budget_.io_busy;
    step = Step::io;
    return true;
  }
  return false;
}

// With the lock held, once: from the ready stack to the budget. The workers' ledgers
// become the per-task states and sizes; running tasks' inputs are pinned;
// finished results still needed become spill candidates; the ready stack is
// dealt into the three tiers in its order.
void Run::switch_to_budget() {
  const uint32_t nt = plan_.num_tasks();
  budget_.on.store(true, std::memory_order_relaxed);
  if (narrowing_.may()) narrowing_.set(false);  // every worker joins the budget's loop
  budget_.bytes = std::make_unique<size_t[]>(nt);
  budget_.task_state = std::make_unique<std::atomic<uint8_t>[]>(nt);
  for (uint32_t t = 0; t < nt; ++t) budget_.task_state[t].store(kWaiting, std::memory_order_relaxed);
  for (int i = 0; i < num_workers_; ++i) {
    Budget::Log& l = budget_.logs[static_cast<size_t>(i)];
    for (size_t j = 0; j < l.count; ++j) {
      const auto [t, b] = l.settled[j];
      budget_.task_state[t].store(kFinished, std::memory_order_relaxed);
      budget_.bytes[t] = b;
      budget_.largest_result = std::max(budget_.largest_result, b);
    }
    l = Budget::Log();
  }
  // Made ready and pushed in one critical section, so a task whose inputs are
  // all done, not on the stack and not settled was popped: it runs (or finished
  // and waits for this lock to settle).
  for (uint32_t t : ledger_.stack) budget_.task_state[t].store(kReady, std::memory_order_relaxed);
  for (uint32_t t = 0; t < nt; ++t) {
    if (ledger_.waiting[t].load(std::memory_order_relaxed) == 0 &&
        budget_.task_state[t].load(std::memory_order_relaxed) == kWaiting) {
      budget_.task_state[t].store(kRunning, std::memory_order_relaxed);
    }
  }
  budget_.node_state.assign(nt, kNone);
  budget_.tier.assign(nt, kAdding);
  budget_.pins.assign(nt, 0);
  budget_.leaving_flag.assign(nt, 0);
  budget_.file.assign(nt, Budget::kNoFile);
  budget_.reload.assign(nt, nullptr);
  budget_.reader_offsets.assign(nt + 1, 0);
  for (uint32_t u = 0; u < nt; ++u) {
    budget_.reader_offsets[u + 1] = budget_.reader_offsets[u] + static_cast<uint32_t>(plan_.dependents(u).size());
  }
  budget_.readers.resize(budget_.reader_offsets[nt]);
  budget_.reader_cursor.assign(budget_.reader_offsets.begin(), budget_.reader_offsets.end() - 1);
  for (uint32_t u = 0; u < nt; ++u) {
    const auto r = plan_.dependents(u);
    auto* out = budget_.readers.data() + budget_.reader_offsets[u];
    std::copy(r.begin(), r.end(), out);
    std::sort(out, out + r.size(), [this](uint32_t a, uint32_t b) { return plan_.priority(a) < plan_.priority(b); });
  }
  // Running tasks (and finished ones not settled yet) pin their inputs; settle unpins them.
  for (uint32_t u = 0; u < nt; ++u) {
    if (budget_.task_state[u].load(std::memory_order_relaxed) != kRunning) continue;
    for (uint32_t d : plan_.dependencies(u)) {
      if (d < nt) ++budget_.pins[d];
    }
  }
  for (uint32_t u = 0; u < nt; ++u) {
    if (budget_.task_state[u].load(std::memory_order_relaxed) == kFinished &&
        ledger_.uses[u].load(std::memory_order_relaxed) > 0) {
      budget_.node_state[u] = kResident;
      offer_locked(u);
    }
  }
  for (uint32_t t : ledger_.stack) push_ready_locked(t);
  ledger_.stack.clear();
}

Budget::Tier Run::classify(uint32_t task) const {
  bool reads = false;
  for (uint32_t d : plan_.dependencies(task)) {
    if (d >= plan_.num_tasks()) continue;
    if (ledger_.uses[d].load(std::memory_order_relaxed) == 1) return kReleasing;
    reads = true;
  }
  return reads ? kNeutral : kAdding;
}

void Run::push_ready_locked(uint32_t task) {
  const Budget::Tier k = classify(task);
  budget_.tier[task] = k;
  budget_.task_state[task].store(kReady, std::memory_order_relaxed);
  budget_.tiers[k].push_back({budget_.seq++, task});
}

// `node` has one reader left: if that reader is ready, finishing it now releases
// `node`, so it moves to the releasing stack.
void Run::promote_locked(uint32_t node) {
  for (uint32_t i = budget_.reader_cursor[node]; i < budget_.reader_offsets[node + 1]; ++i) {
    const uint32_t r = budget_.readers[i];
    if (budget_.task_state[r].load(std::memory_order_relaxed) == kReady && budget_.tier[r] == kNeutral) {
      budget_.tier[r] = kReleasing;
      budget_.tiers[kReleasing].push_back({budget_.seq++, r});
      return;
    }
  }
}

// Drops stale tops; returns the stack to pop from, or -1 when none is ready.
int Run::choose_tier() {
  for (int k = 0; k < 3; ++k) {
    auto& s = budget_.tiers[k];
    while (!s.empty() && (budget_.task_state[s.back().task].load(std::memory_order_relaxed) != kReady ||
                          budget_.tier[s.back().task] != k)) {
      s.pop_back();
    }
  }
  if (held_bytes_.load(std::memory_order_relaxed) < budget_.target_bytes) {
    int best = -1;
    for (int k = 0; k < 3; ++k) {
      const auto& tier = budget_.tiers[k];
      if (!tier.empty() && (best < 0 || tier.back().seq > budget_.tiers[best].back().seq)) best = k;
    }
    return best;
  }
  for (int k = 0; k < 3; ++k) {
    if (!budget_.tiers[k].empty()) return k;
  }
  return -1;
}

// With the lock held: whether `task` may start now. Makes room for its inputs that
// are on disk (victims go to `io`), pins its inputs and marks those to reload.
// False when it must wait for memory to come free; then, when nothing else runs
// that could free it, the run stops with MemoryLimitError.
bool Run::admit_locked(uint32_t task, int tier, Io& io) {
  const uint32_t nt = plan_.num_tasks();
  const auto deps = plan_.dependencies(task);
  size_t need = 0;
  for (size_t i = 0; i < deps.size(); ++i) {
    const uint32_t d = deps[i];
    if (d >= nt) continue;
    ++budget_.pins[d];  // first, so that making room never picks this task's own inputs
    // An input read twice comes back once.
    if (budget_.node_state[d] == kSpilled && std::find(deps.begin(), deps.begin() + i, d) == deps.begin() + i) {
      need += budget_.bytes[d];
    }
    if (budget_.node_state[d] == kSpilling) {
      // Being written out, but it stays now that a reader needs it: it no
      // longer counts as leaving; chosen by this worker a moment ago, it is not
      // written at all.
      budget_.set_leaving(d, false);
      auto it = std::find_if(io.spill.begin(), io.spill.end(), [d](const auto& e) { return e.first == d; });
      if (it != io.spill.end()) {
        io.spill.erase(it);
        budget_.node_state[d] = kResident;
      }
    }
  }
  // A task starts (and its inputs come back) only into room that is free now:
  // counting on bytes still being written out would let one worker run task
  // after task, each result on top of that credit, while another writes.
  // Results are unknown until their tasks return, so room is also kept for each
  // running task's result and this one's, each counted as the largest result so
  // far (times GetOptions::task_footprint, for working memory): otherwise every
  // worker adds its result on top of a full budget, and a task alone (a 32 MiB
  // read and its 32 MiB of file bytes) on top of what is held. A task alone that
  // cannot get that room, only room for its inputs, starts into what is free.
  // It is not alone while results wait to be sent: each send frees its result.
  const size_t results = (static_cast<size_t>(ledger_.running) + 1) * task_footprint();
  const auto room_for = [&](size_t bytes) {
    return make_room_locked(bytes, io) &&
           held_bytes_.load(std::memory_order_relaxed) + budget_.arriving + bytes <= budget_.limit;
  };
  const bool alone = ledger_.running == 0 && deliveries_.unsent_results == 0;
  const bool room = room_for(need + results) || (alone && room_for(need));
  // Without room, a task that releases an input may still start, but only when
  // nothing else runs, writes or waits to be sent: it is the way out when
  // everything held is pinned, and alone it adds at most its one result.
  const bool nothing_leaves = alone && budget_.io_busy == 0;
  const bool fits = room || (need == 0 && tier == kReleasing && nothing_leaves);
  if (!fits) {
    for (uint32_t d : deps) {
      if (d < nt && --budget_.pins[d] == 0) offer_locked(d);
    }
    // Results waiting to be sent leave once sent (Run::idle_locked waits for that).
    if (nothing_leaves && io.empty()) {
      size_t inputs = 0;
      for (uint32_t d : deps) inputs += d < nt ? budget_.bytes[d] : 0;
      memory_error_locked(task, inputs, need > 0 ? "to bring its inputs back, and nothing held can spill"
                                                 : "to start, and nothing held can spill");
    }
    return false;
  }
  budget_.arriving += need;
  for (uint32_t d : deps) {
    if (d >= nt) continue;
    if (budget_.node_state[d] == kSpilled) {
      budget_.node_state[d] = kReloading;
      io.reload.push_back(d);
    } else if (budget_.node_state[d] == kReloading) {
      io.await.push_back(d);  // by another worker, or by this one (then it is back before the wait)
    }
  }
  return true;
}

// The room kept for one running task: the largest result so far, times task_footprint.
size_t Run::task_footprint() const {
  return static_cast<size_t>(static_cast<double>(budget_.largest_result) * options_.task_footprint);
}

// With the lock held: chooses victims, needed latest first, until `need` more bytes
// fit under the limit; false when the candidates ran out first.
bool Run::make_room_locked(size_t need, Io& io) {
  auto later = [](const std::pair<uint32_t, uint32_t>& a, const std::pair<uint32_t, uint32_t>& b) {
    return a.first < b.first;
  };
  for (;;) {
    const size_t held = held_bytes_.load(std::memory_order_relaxed) - budget_.leaving + budget_.arriving;
    if (held + need <= budget_.limit) return true;
    if (budget_.victims.empty()) return false;
    std::pop_heap(budget_.victims.begin(), budget_.victims.end(), later);
    const auto [key, d] = budget_.victims.back();
    budget_.victims.pop_back();
    if (budget_.node_state[d] != kResident || budget_.pins[d] > 0 || budget_.file[d] == Budget::kCannotSpill ||
        ledger_.uses[d].load(std::memory_order_relaxed) == 0) {
      continue;
    }
    const uint32_t now = next_reader(d);
    if (now != key) {
      budget_.victims.emplace_back(now, d);
      std::push_heap(budget_.victims.begin(), budget_.victims.end(), later);
      continue;
    }
    if (budget_.file[d] >= 0) {  // came back earlier and still has its file
      io.discard.push_back(std::move(ledger_.values[d]));
      ledger_.values[d] = Value();
      budget_.node_state[d] = kSpilled;
      held_bytes_.store(held_bytes_.load(std::memory_order_relaxed) - budget_.bytes[d], std::memory_order_relaxed);
      spill_count_.fetch_add(1, std::memory_order_relaxed);
      continue;
    }
    budget_.reload[d] = ledger_.values[d].reloader();
    if (budget_.reload[d] == nullptr) {
      budget_.file[d] = Budget::kCannotSpill;
      continue;
    }
    budget_.node_state[d] = kSpilling;
    budget_.set_leaving(d, true);
    io.spill.emplace_back(d, ledger_.values[d]);
  }
}

// The priority of the first reader of `node` that has not started (readers are
// sorted by priority; the cursor only moves forward); none: after every task.
uint32_t Run::next_reader(uint32_t node) {
  uint32_t& i = budget_.reader_cursor[node];
  const uint32_t end = budget_.reader_offsets[node + 1];
  while (i < end && budget_.task_state[budget_.readers[i]].load(std::memory_order_relaxed) >= kRunning) ++i;
  return i < end ? plan_.priority(budget_.readers[i]) : UINT32_MAX;
}

void Run::offer_locked(uint32_t node) {
  if (budget_.node_state[node] != kResident || budget_.pins[node] > 0 || budget_.file[node] == Budget::kCannotSpill ||
      ledger_.uses[node].load(std::memory_order_relaxed) == 0 || deliveries_.awaits_send(node)) {
    return;
  }
  budget_.victims.emplace_back(next_reader(node), node);
  std::push_heap(budget_.victims.begin(), budget_.victims.end(),
                 [](const auto& a, const auto& b) { return a.first < b.first; });
}

// Outside the lock: drop files, write victims, bring inputs back, and wait, as
// an idle worker does, for inputs another worker brings back. False when the run
// stopped meanwhile. `counted`: this worker holds a task (ledger_.running), else it
// is busy with io alone (budget_.io_busy).
bool Run::do_io(Worker& w, bool counted) {
  Io& io = w.io;
  for (int64_t f : io.drop_files) budget_.store->drop(f);
  io.drop_files.clear();
  io.discard.clear();
  try {
    for (auto& [d, v] : io.spill) {
      const auto t0 = std::chrono::steady_clock::now();
      uint64_t written = 0;
      int64_t file = -1;  // none: it stays in memory, never offered again (finish_spill)
      try {
        file = budget_.store->put(v, written);
      } catch (const NotSpillable&) {}
      finish_spill(w, d, std::move(v), file, written, t0);
    }
    io.spill.clear();
    for (uint32_t d : io.reload) reload(w, d, true);
    io.reload.clear();
  } catch (...) {
    abandon_io(io);
    fail_io(counted, std::current_exception());
    return false;
  }
  if (io.await.empty()) return true;
  Lock lk(ledger_.lock);
  for (uint32_t d : io.await) {
    while (budget_.node_state[d] != kResident) {
      if (stopping_.load(std::memory_order_relaxed)) {
        if (counted) --ledger_.running;
        io.await.clear();
        return false;
      }
      sleep_locked(lk);  // reload() wakes the sleepers once it is back
    }
  }
  io.await.clear();
  return true;
}

void Run::finish_spill(Worker& w, uint32_t d, Value value, int64_t file, uint64_t written,
                       std::chrono::steady_clock::time_point t0) {
  Value dropped;
  size_t freed = 0;
  bool released = false;
  {
    std::lock_guard lk(ledger_.lock);
    budget_.set_leaving(d, false);
    if (file < 0) {
      budget_.file[d] = Budget::kCannotSpill;  // the disk budget has no room for it, or it has no spilled form
      if (budget_.node_state[d] == kSpilling) budget_.node_state[d] = kResident;
    } else if (budget_.node_state[d] == kReleased) {
      released = true;  // its last reader ran meanwhile
    } else {
      budget_.file[d] = file;
      spilled_bytes_.fetch_add(written, std::memory_order_relaxed);
      spill_count_.fetch_add(1, std::memory_order_relaxed);
      if (budget_.pins[d] > 0) {
        budget_.node_state[d] = kResident;  // a reader started meanwhile; the file stays for later
      } else {
        dropped = std::move(ledger_.values[d]);
        ledger_.values[d] = Value();
        freed = budget_.bytes[d];
        budget_.node_state[d] = kSpilled;
        held_bytes_.store(held_bytes_.load(std::memory_order_relaxed) - budget_.bytes[d], std::memory_order_relaxed);
      }
    }
    wake_locked(true);
  }
  if (released) budget_.store->drop(file);
  value = Value();
  const bool dropping = dropped.has_value();
  dropped = Value();
  if (dropping) return_cached_memory_past_allowance(freed);
  budget_.spill_ns.fetch_add(since_ns(t0), std::memory_order_relaxed);
  if (file >= 0 && !released) spill_event(SpillEvent::Kind::spill, d, w.id, t0);
}

// `counted`: the result comes back into the run's memory (not handed to the caller).
void Run::reload(Worker& w, uint32_t d, bool counted) {
  const auto t0 = std::chrono::steady_clock::now();
  Value v = budget_.store->get(budget_.file[d], budget_.reload[d]);
  {
    std::lock_guard lk(ledger_.lock);
    ledger_.values[d] = std::move(v);
    budget_.node_state[d] = kResident;
    if (counted) {
      budget_.arriving -= budget_.bytes[d];
      add_held_locked(budget_.bytes[d]);
    }
    reload_count_.fetch_add(1, std::memory_order_relaxed);
    wake_locked(true);  // a worker may wait for it (do_io)
  }
  budget_.reload_ns.fetch_add(since_ns(t0), std::memory_order_relaxed);
  spill_event(SpillEvent::Kind::reload, d, w.id, t0);
}

// Puts back what a worker chose but will not do: victims stay, reloads stay on disk.
void Run::abandon_io(Io& io) {
  if (io.spill.empty() && io.reload.empty()) {
    io.discard.clear();
    return;
  }
  {
    std::lock_guard lk(ledger_.lock);
    for (auto& [d, v] : io.spill) {
      budget_.set_leaving(d, false);
      if (budget_.node_state[d] == kSpilling) budget_.node_state[d] = kResident;
    }
    for (uint32_t d : io.reload) {
      if (budget_.node_state[d] != kReloading) continue;
      budget_.node_state[d] = kSpilled;
      budget_.arriving -= budget_.bytes[d];
    }
  }
  io.spill.clear();
  io.reload.clear();
  io.discard.clear();
}

void Run::fail_io(bool counted, std::exception_ptr error) {
  std::lock_guard lk(ledger_.lock);
  if (counted) {
    --ledger_.running;
  } else {
    --budget_.io_busy;
  }
  stop_locked({Failure::Kind::error, 0, std::move(error)});
}

void Run::add_held_locked(size_t bytes) {
  const size_t total = held_bytes_.load(std::memory_order_relaxed) + bytes;
  held_bytes_.store(total, std::memory_order_relaxed);
  if (total > peak_bytes_.load(std::memory_order_relaxed)) peak_bytes_.store(total, std::memory_order_relaxed);
}

// With the lock held: stops the run with MemoryLimitError, naming the largest results held.
void Run::memory_error_locked(uint32_t task, size_t needed, const std::string& why) {
  std::vector<MemoryLimitError::Held> largest;
  auto consider = [&](uint32_t u, size_t bytes) {
    largest.push_back({plan_.key(u), bytes});
    std::sort(largest.begin(), largest.end(), [](const auto& a, const auto& b) { return a.bytes > b.bytes; });
    if (largest.size() > 3) largest.pop_back();
  };
  if (budget_.on.load(std::memory_order_relaxed)) {
    for (uint32_t u = 0; u < plan_.num_tasks(); ++u) {
      if (budget_.node_state[u] == kResident || budget_.node_state[u] == kSpilling) consider(u, budget_.bytes[u]);
    }
  } else {
    for (int i = 0; i < num_workers_; ++i) {
      const Budget::Log& l = budget_.logs[static_cast<size_t>(i)];
      for (size_t j = 0; j < l.count; ++j) {
        const Budget::Settled& e = l.settled[j];
        if (ledger_.uses[e.task].load(std::memory_order_relaxed) > 0) consider(e.task, e.bytes);
      }
    }
  }
  stop_locked({Failure::Kind::error, task,
               std::make_exception_ptr(MemoryLimitError(plan_.key(task), needed, budget_.limit,
                                                        held_bytes_.load(std::memory_order_relaxed), std::move(largest),
                                                        why))});
}

// On the caller's thread at the end: requested results on disk come back (as
// mappings where their type maps, so they need not fit in memory together);
// they are the caller's now, not bytes the run holds.
void Run::reload_requested() {
  if (!budget_.on.load(std::memory_order_relaxed)) return;
  Worker w(0);
  for (uint32_t r : plan_.requested()) {
    if (r < plan_.num_tasks() && budget_.node_state[r] == kSpilled) {
      budget_.node_state[r] = kReloading;
      reload(w, r, false);
    }
  }
}

void Run::spill_event(SpillEvent::Kind kind, uint32_t node, int worker, std::chrono::steady_clock::time_point t0) {
  if (!hooks_.on_spills()) return;
  const SpillEvent e{kind, node, budget_.bytes[node], worker, t0, std::chrono::steady_clock::now()};
  // A spill hook that throws stops the run like any callback.
  hooks_.spill(*this, e, [&](std::exception_ptr error) {
    std::lock_guard l(ledger_.lock);
    stop_locked({Failure::Kind::callback, node, std::move(error)});
  });
}

}  // namespace tessera::detail
