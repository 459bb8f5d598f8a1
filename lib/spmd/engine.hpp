// Private parts of tessera::spmd: engines, the cluster they form, and the
// communicator behind the collectives of one apply.
#pragma once

#include <atomic>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tessera/graph/value.hpp"
#include "tessera/spmd/context.hpp"
#include "tessera/spmd/detail/backend.hpp"
#include "tessera/spmd/detail/job.hpp"
#include "polling.hpp"

namespace tessera::spmd::detail {

// One engine: a thread that runs the requests posted to it in order, and its
// namespace. The namespace is touched only by the engine's own thread (every
// push, pull and apply is a request), so it needs no lock.
//
// Posting is split in two so that a cluster can queue a request on every engine
// before it wakes any: enqueue() links the request into the engine's inbox, wake()
// wakes the engine when it sleeps (and costs one atomic load when it does not).
// An idle engine polls its inbox for a while before it sleeps, unless the gate
// says the machine is busy (engine.cpp and polling.hpp say why, with figures).
class Engine : public Namespace {
 public:
  //! `gate` (the cluster's) says whether the engine may poll while idle.
  Engine(int id, PollGate& gate);
  ~Engine();  // stop() and join()
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  //! Queues slot `slot` of `job` for this engine, behind what was queued before.
  void enqueue(std::shared_ptr<Job> job, size_t slot);
  //! Wakes the engine if it sleeps (one atomic load when it does not).
  void wake();
  //! Asks the thread to exit once its queue is empty.
  void stop();
  void join();

 private:
  struct Post {
    Post* next = nullptr;
    std::shared_ptr<Job> job;
    size_t slot = 0;
  };
  void loop();
  bool has_posts() const { return inbox_.load(std::memory_order_relaxed) != nullptr; }
  Post* take_all();  // the inbox, oldest first
  void idle();       // returns when the inbox may hold something, or on stop

  // The inbox: a lock-free stack of posts, newest first. Producers push with a
  // CAS (they are serialized by the cluster's mutex anyway); the engine takes the
  // whole stack at once and reverses it, so it runs requests in the order posted.
  std::atomic<Post*> inbox_{nullptr};
  // 1 while the engine sleeps or is about to (futex word). A waker that swaps it
  // back to 0 owes the engine a futex wake; everyone else skips the syscall.
  std::atomic<uint32_t> sleeping_{0};
  std::atomic<bool> stopping_{false};
  PollGate& gate_;
  std::thread thread_;  // started last, once the rest is built
};

// The engines of a Cluster, shared with its views so that a view outliving its
// cluster gets an error rather than a dangling pointer.
class LocalClusterState : public ClusterState {
 public:
  explicit LocalClusterState(int n);
  ~LocalClusterState() override { stop(); }

  int size() const { return static_cast<int>(engines_.size()); }
  bool by_name() const override { return false; }
  std::shared_ptr<const Job> apply(const char* method, const std::vector<int>& targets, Callable callable,
                                   const std::string* registered, std::vector<ApplyArg> args) override;
  std::shared_ptr<const Job> assign(const char* method, const std::vector<int>& targets, const std::string& name,
                                    std::vector<Value> parts) override;
  std::shared_ptr<const Job> assign_all(const std::vector<int>& targets, std::map<std::string, Value> ns) override;
  std::shared_ptr<const Job> pull(const char* method, const std::vector<int>& targets,
                                  const std::string& name) override;
  void stop() override;

 private:
  //! Posts every slot of `job` to its engine; throws Error when stopped.
  std::shared_ptr<const Job> submit(std::shared_ptr<Job> job);

 private:
  std::mutex mu_;  // held while posting, so every engine sees requests in one order
  bool stopped_ = false;
  std::once_flag joined_;
  PollGate poll_gate_;  // shared by the engines: a busy machine stops them all polling
  std::vector<std::unique_ptr<Engine>> engines_;
};

// The engines of one apply, for barrier and allgather. Ranks are positions in
// `ids`. A rank that leaves (returns or raises) while others wait at a collective,
// or before they reach one, breaks the communicator: every waiting and later
// collective raises BarrierError naming that engine.
class LocalCommunicator : public Communicator {
 public:
  explicit LocalCommunicator(std::vector<int> ids);

  int size() const override { return static_cast<int>(ids_.size()); }
  int engine_id(int rank) const override { return ids_[static_cast<size_t>(rank)]; }
  void barrier(int rank) override;
  std::vector<Value> allgather(int rank, Value value) override;
  void leave(int rank, bool failed) override;

 private:
  void arrive_and_wait(std::unique_lock<std::mutex>& lock);
  void check_usable() const;  // throws BarrierError once broken

  std::vector<int> ids_;
  std::mutex mu_;
  std::condition_variable cv_;
  int arrived_ = 0;
  unsigned long generation_ = 0;
  int broken_rank_ = -1;  // the rank whose leaving broke the communicator
  bool broken_by_error_ = false;
  std::vector<Value> slots_;
};

}  // namespace tessera::spmd::detail
