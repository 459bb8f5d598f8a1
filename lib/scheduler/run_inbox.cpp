// A run with an Inbox (tessera/scheduler/inbox.hpp): values of some tasks come
// from another thread while the run goes on. A delivery is one more way for a
// task to complete: between tasks, a worker's pop first looks whether anything
// arrived (one load), and takes what did as completions (take_deliveries_locked,
// in run.cpp beside the other completion). An inbox task waits on one input, its
// delivery: ledger_.waiting holds 1 for it until then, so the switch to the budget and
// the cycle search see it as waiting, not running.
#include <utility>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include "run.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::detail {

// Checks that the Plan was made for exactly the inbox's keys and binds the run
// to the inbox (which serves one run).
void Run::attach_inbox() {
  const std::vector<Key>& planned = plan_.inbox_keys();
  if (options_.inbox == nullptr) {
    throw ValueError(absl::StrCat("get: the Plan was made for an inbox of ", planned.size(), " keys (", planned[0].brief(),
                                  ", ...), but GetOptions::inbox is not set"));
  }
  InboxState& inbox = inbox_state(*options_.inbox);
  for (const Key& k : planned) {
    if (inbox.index_of(k) < 0) {
      throw ValueError(absl::StrCat("get: the Plan was made for inbox key ", k.brief(),
                                    ", which GetOptions::inbox does not declare"));
    }
  }
  if (planned.size() != inbox.keys().size()) {
    throw ValueError(absl::StrCat("get: expected a Plan made for the inbox's ", inbox.keys().size(),
                                  " keys (Plan's inbox argument), found one made for ", planned.size()));
  }
  for (const Key& k : inbox.keys()) {
    if (options_.cache.contains(k)) {
      throw ValueError(absl::StrCat("get: key ", k.brief(),
                                    " is both in the cache and in the inbox; expected one source for it"));
    }
  }
  release_sent(inbox.returned());
  deliveries_.task_of.assign(inbox.keys().size(), Deliveries::kNoTask);
  for (uint32_t task : plan_.inbox_tasks()) {
    deliveries_.task_of[static_cast<size_t>(inbox.index_of(plan_.key(task)))] = task;
    ledger_.waiting[task].store(1, std::memory_order_relaxed);
  }
  deliveries_.pending = static_cast<uint32_t>(plan_.inbox_tasks().size());
  inbox.attach(&epoch_);
  deliveries_.inbox = &inbox;
  deliveries_.link.state = &inbox;
}

// Whether the inbox has deliveries beyond the first `taken`, or failed.
bool Run::inbox_news(size_t taken) const {
  return deliveries_.inbox->arrived() != taken || deliveries_.inbox->failed();
}

// With the lock held, at every pop: a failed inbox stops the run (false); what
// arrived completes its tasks.
bool Run::poll_inbox_locked(Worker& w) {
  if (!inbox_news(deliveries_.taken)) return true;
  if (deliveries_.inbox->failed()) {
    stop_locked({Failure::Kind::error, 0, deliveries_.inbox->error()});
    return false;
  }
  take_deliveries_locked(w);
  return true;
}

// The requested keys past the caller's first `returned` are results for other
// ranks: they lose the use a request keeps (unless the caller requested them
// too), so the last local reader releases them, or, read by none here,
// drop_unread_locked. Without a memory limit the use goes now (the result
// leaves once posttask handed it on); with one when the inbox says it was sent
// (deliveries_.sent_task, release_sent_locked), so that it stays counted until its wire
// form counts instead. Until then the sender holds it too, so it is no spill
// candidate (deliveries_.awaiting_send): writing it out would free nothing.
void Run::release_sent(size_t returned) {
  const std::vector<uint32_t>& requested = plan_.requested();
  if (returned >= requested.size()) return;
  absl::flat_hash_set<uint32_t> callers(requested.begin(), requested.begin() + static_cast<std::ptrdiff_t>(returned));
  if (budget_.limit > 0) {
    deliveries_.sent_task.assign(requested.size(), Deliveries::kNoTask);
    deliveries_.awaiting_send.assign(plan_.num_tasks(), 0);
  }
  for (size_t k = returned; k < requested.size(); ++k) {
    const uint32_t u = requested[k];
    if (u >= plan_.num_tasks() || callers.contains(u)) continue;
    if (budget_.limit > 0) {
      deliveries_.sent_task[k] = u;
      deliveries_.awaiting_send[u] = 1;
    } else {
      ledger_.uses[u].fetch_sub(1, std::memory_order_relaxed);
    }
  }
}

// With the lock held, under a memory limit: the result of requested key `k` was
// sent; its request's use goes, and with the last use the result (Inbox sends
// come only after posttask, so it was settled). One that local readers still
// need becomes a spill candidate now. Once per request: Inbox::sent is public,
// and a second word for the same one must not drop a use a reader holds.
void Run::release_sent_locked(size_t k, Worker& w) {
  if (k >= deliveries_.sent_task.size()) return;
  const uint32_t u = std::exchange(deliveries_.sent_task[k], Deliveries::kNoTask);
  if (u == Deliveries::kNoTask) return;
  if (std::exchange(deliveries_.awaiting_send[u], 0) != 0) --deliveries_.unsent_results;
  if (ledger_.uses[u].fetch_sub(1, std::memory_order_acq_rel) == 1) {
    drop_unread_locked(u, w.io);
  } else if (budget_.on.load(std::memory_order_relaxed)) {
    offer_locked(u);
  }
}

// With the lock held: a result that nothing of this run reads any more and that
// was not requested (a result for other ranks, Run::release_sent) leaves once
// posttask handed it on, or under a limit once it was sent. Its value goes
// into the worker's io.discard, destroyed outside the lock (pop_locked hands
// the io back before the next task). Under the budget it may be on disk or
// being written (its use kept it a victim until the send): its file goes, and
// a write under way drops its file when it ends (finish_spill).
void Run::drop_unread_locked(uint32_t task, Io& io) {
  const size_t bytes = ledger_.values[task].nbytes();  // 0 when on disk
  if (budget_.on.load(std::memory_order_relaxed)) {
    if (budget_.node_state[task] == Budget::kSpilling) budget_.set_leaving(task, false);
    if (budget_.file[task] >= 0) io.drop_files.push_back(budget_.file[task]);
    budget_.file[task] = Budget::kNoFile;
    budget_.node_state[task] = Budget::kReleased;
  }
  io.discard.push_back(std::move(ledger_.values[task]));
  ledger_.values[task] = Value();
  held_count_.store(held_count_.load(std::memory_order_relaxed) - 1, std::memory_order_relaxed);
  held_bytes_.store(held_bytes_.load(std::memory_order_relaxed) - bytes, std::memory_order_relaxed);
}

}  // namespace tessera::detail
