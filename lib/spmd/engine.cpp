// Engines and the cluster: one thread per engine, a FIFO of requests each.
//
// Why a thread per engine rather than tasks on a shared pool: an SPMD function may
// wait at a barrier for every other engine of its apply, so all of them must be
// running at once; a pool smaller than the view would deadlock. Idle engines
// sleep on a condition variable and cost nothing but their stacks.
#include "engine.hpp"

#include <chrono>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::spmd::detail {

Engine::Engine(int id) : id_(id) {
  thread_ = std::thread([this] { loop(); });
}

Engine::~Engine() {
  stop();
  join();
}

void Engine::post(std::shared_ptr<Job> job, size_t slot) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(Item{std::move(job), slot});
    queued_.fetch_add(1, std::memory_order_release);
  }
  cv_.notify_one();  // no system call when the engine is spinning rather than sleeping
}

void Engine::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_one();
}

void Engine::join() {
  if (thread_.joinable()) thread_.join();
}

const Value& Engine::lookup(const std::string& name) const {
  auto it = ns_.find(name);
  if (it == ns_.end()) {
    throw NameError(absl::StrCat("name '", name, "' is not defined on engine ", id_));
  }
  return it->second;
}

void spin_until(absl::FunctionRef<bool()> done, std::chrono::microseconds window) {
  auto deadline = std::chrono::steady_clock::now() + window;
  do {
    for (int i = 0; i < 64; ++i) {
      if (done()) return;
      std::this_thread::yield();  // let the other engines and the caller have the core
    }
  } while (std::chrono::steady_clock::now() < deadline);
}

void Engine::loop() {
  for (;;) {
    // Requests often come in bursts (an SPMD program applies, gathers, applies
    // again): stay awake a moment before sleeping, so the next one needs no wake-up.
    spin_until([this] { return queued_.load(std::memory_order_acquire) > 0; }, kSpinWindow);
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and everything sent has run
      item = std::move(queue_.front());
      queue_.pop_front();
      queued_.fetch_sub(1, std::memory_order_relaxed);
    }
    item.job->run(*this, item.slot);
  }
}

ClusterState::ClusterState(int n) {
  if (n < 1) {
    throw Error(absl::StrCat("a Cluster needs at least one engine, but n = ", n, " was given"));
  }
  engines_.reserve(static_cast<size_t>(n));
  for (int i = 0; i < n; ++i) engines_.push_back(std::make_unique<Engine>(i));
}

void ClusterState::submit(const std::shared_ptr<Job>& job) {
  std::lock_guard<std::mutex> lock(mu_);
  if (stopped_) {
    throw Error(absl::StrCat(job->method(), ": the cluster is stopped; start a new Cluster to run more"));
  }
  job->mark_submitted();
  const std::vector<int>& ids = job->engine_ids();
  for (size_t slot = 0; slot < ids.size(); ++slot) engines_[static_cast<size_t>(ids[slot])]->post(job, slot);
}

void ClusterState::stop() {
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
