// Engines and the cluster: one thread per engine, a FIFO of requests each.
//
// Why a thread per engine rather than tasks on a shared pool: an SPMD function may
// wait at a barrier for every other engine of its apply, so all of them must be
// running at once; a pool smaller than the view would deadlock.
//
// What a request costs is almost all thread switching, so the design spends as
// few wake-ups as it can (`scripts/bench spmd` prints the no-op apply these
// choices were measured by):
//  - An engine's inbox is a lock-free stack that the engine takes whole; its
//    sleep is a futex word that a poster swaps back only when the engine really
//    sleeps, so a post to an engine that is awake costs no syscall and no lock.
//  - The cluster queues a request on every engine before it wakes any, so an
//    engine woken first does not take the CPU from the caller still posting.
//  - An idle engine polls its inbox with sched_yield for kIdlePoll before it
//    sleeps (polling.hpp says why: on a VM, waking a thread on a halted vCPU
//    costs far more than a wake on a running one). Back-to-back requests then
//    reach engines without any wake-up, faster than sleeping engines on a quiet
//    machine. Polling with pause instead of yield starved the
//    engines that had work when engines outnumber CPUs.
//  - Polling stops, for every engine of the cluster, as soon as one sees another
//    process hold its CPU (PollGate): then sleeping engines are the faster choice.
#include "engine.hpp"

#include <absl/strings/str_cat.h>

#include "futex.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::spmd::detail {

namespace {

// An idle engine polls this long for its next request before it sleeps (when the
// cluster's PollGate is open): back-to-back requests then reach it without a
// wake-up, and a burst of them keeps its vCPU from halting in between.
constexpr std::chrono::microseconds kIdlePoll{100};

// The engine whose thread this is (null on other threads): a request an engine
// sends to itself would wait behind the request it is running, forever.
thread_local const Engine* this_thread_engine = nullptr;

}  // namespace

Engine::Engine(int id, PollGate& gate) : Namespace(id), gate_(gate) {
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  stop();
  join();
}

void Engine::enqueue(std::shared_ptr<Job> job, size_t slot) {
  Post* post = new Post{nullptr, std::move(job), slot};
  post->next = inbox_.load(std::memory_order_relaxed);
  // seq_cst: ordered before wake()'s load of sleeping_, as idle() orders its
  // store of sleeping_ before its load of inbox_ (one of the two sees the other).
  while (!inbox_.compare_exchange_weak(post->next, post, std::memory_order_seq_cst, std::memory_order_relaxed)) {
  }
}

void Engine::wake() {
  // Only the caller that swaps 1 for 0 makes the syscall; an engine that is awake,
  // polling, or already being woken costs a load.
  if (sleeping_.load(std::memory_order_seq_cst) == 0) return;
  if (sleeping_.exchange(0, std::memory_order_seq_cst) == 1) futex_wake(sleeping_, 1);
}

void Engine::stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  wake();
}

void Engine::join() {
  if (thread_.joinable()) thread_.join();
}

Engine::Post* Engine::take_all() {
  Post* newest_first = inbox_.exchange(nullptr, std::memory_order_acquire);
  Post* oldest_first = nullptr;
  while (newest_first != nullptr) {
    Post* next = newest_first->next;
    newest_first->next = oldest_first;
    oldest_first = newest_first;
    newest_first = next;
  }
  return oldest_first;
}

void Engine::idle() {
  if (gate_.open(PollClock::now())) {
    PollResult polled = poll_yielding(
        [this] { return has_posts() || stopping_.load(std::memory_order_relaxed); }, kIdlePoll);
    if (polled == PollResult::ready) return;
    if (polled == PollResult::contended) gate_.close(PollClock::now());
  }
  sleeping_.store(1, std::memory_order_seq_cst);
  if (inbox_.load(std::memory_order_seq_cst) == nullptr && !stopping_.load(std::memory_order_seq_cst)) {
    futex_wait(sleeping_, 1);
  }
  sleeping_.store(0, std::memory_order_relaxed);
}

void Engine::loop() {
  this_thread_engine = this;
  for (;;) {
    Post* post = take_all();
    if (post == nullptr) {
      if (stopping_.load(std::memory_order_acquire)) {
        // Everything sent before stop() is in the inbox by now; run it first.
        if (inbox_.load(std::memory_order_acquire) == nullptr) return;
        continue;
      }
      idle();
      continue;
    }
    while (post != nullptr) {
      std::unique_ptr<Post> current(post);
      post = post->next;
      current->job->run(*this, current->slot);
    }
  }
}

LocalClusterState::LocalClusterState(int n) {
  if (n < 1) {
    throw Error(absl::StrCat("a Cluster needs at least one engine, but n = ", n, " was given"));
  }
  engines_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) engines_.push_back(std::make_unique<Engine>(i, poll_gate_));
}

std::shared_ptr<const Job> LocalClusterState::submit(std::shared_ptr<Job> job) {
  const std::vector<int>& ids = job->engine_ids();
  {
    // The lock gives every engine the requests in one order; the wake-ups need no
    // lock (an engine that stop() reaches first still runs what it was sent).
    std::lock_guard<std::mutex> lock(mu_);
    if (stopped_) {
      throw Error(absl::StrCat(job->method(), ": the cluster is stopped; start a new Cluster to run more"));
    }
    if (this_thread_engine != nullptr) {
      for (int id : ids) {
        if (engines_[static_cast<size_t>(id)].get() == this_thread_engine) {
          throw Error(absl::StrCat(job->method(), ": called from engine ", id,
                                   " of the same cluster, which is busy running the caller and would wait for "
                                   "itself forever; call it from outside the cluster, or target other engines"));
        }
      }
    }
    job->mark_submitted();
    // Queue on every engine before waking any: an engine woken early would
    // otherwise compete for the CPU with the caller that still has posts to make.
    for (size_t slot = 0; slot < ids.size(); ++slot) engines_[static_cast<size_t>(ids[slot])]->enqueue(job, slot);
  }
  for (int id : ids) engines_[static_cast<size_t>(id)]->wake();
  return job;
}

void LocalClusterState::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopped_ = true;
  }
  std::call_once(joined_, [this] {
    for (auto& e : engines_) e->stop();
    for (auto& e : engines_) e->join();
  });
}

}  // namespace tessera::spmd::detail
