// Engines and the cluster: one thread per engine, a FIFO of requests each.
//
// Why a thread per engine rather than tasks on a shared pool: an SPMD function may
// wait at a barrier for every other engine of its apply, so all of them must be
// running at once; a pool smaller than the view would deadlock. Idle engines
// sleep on a condition variable and cost nothing but their stacks. They do not
// spin while idle: measured on an oversubscribed machine, spinning engines (even
// yielding ones) delayed the engines that had work more than they saved in
// wake-ups, and a hundred idle engines would burn the cores others need.
#include "engine.hpp"

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
  }
  cv_.notify_one();
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

void Engine::loop() {
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [this] { return !queue_.empty() || stopping_; });
      if (queue_.empty()) return;  // stopping, and everything sent has run
      item = std::move(queue_.front());
      queue_.pop_front();
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
