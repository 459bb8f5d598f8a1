// tessera/spmd/detail/job.hpp — one request to a set of engines (private).
//
// A Job holds what each engine runs and where its result goes. Local engines call
// run(engine, slot) on their own threads, a remote backend calls finish(slot, ...)
// as answers arrive; the last slot to finish marks the job done and wakes waiters. AsyncResult reads the results only
// after done.
#pragma once

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <functional>
#include <string>
#include <vector>

#include "tessera/graph/value.hpp"

namespace tessera::spmd::detail {

class Engine;

class Job {
 public:
  using Clock = std::chrono::steady_clock;
  //! What engine `slot` of the job computes; called concurrently on every engine.
  using Work = std::function<Value(Engine& engine, size_t slot)>;

  Job(std::string method, std::vector<int> engine_ids, Work work);

  //! Runs slot `slot` on `engine` (the engine's thread); never throws.
  void run(Engine& engine, size_t slot) noexcept;
  //! Records slot `slot`'s result, or its error when `error` is set: how a backend
  //! whose engines are other processes completes a job (`work` is then empty).
  //! Call once per slot; never throws.
  void finish(size_t slot, Value value, std::exception_ptr error) noexcept;
  //! Stamps the submission time (the cluster calls it right before posting).
  void mark_submitted() { submitted_ = Clock::now(); }

  bool ready() const { return done_.load(std::memory_order_acquire) != 0; }
  //! Waits until done or until `timeout` passes (forever when negative); true when done.
  bool wait(std::chrono::duration<double> timeout) const;
  //! True when any engine failed; call only when ready().
  bool failed() const;
  //! Throws CompositeError when any engine failed; call only when ready().
  void rethrow_errors() const;
  //! Each engine's result, in engine order; read only when ready() and no engine failed.
  const std::vector<Value>& values() const { return values_; }
  const std::vector<int>& engine_ids() const { return ids_; }
  const std::string& method() const { return method_; }
  //! From submission to completion (or to now, while running).
  std::chrono::duration<double> elapsed() const;
  //! How many engines have not finished yet.
  size_t pending() const { return remaining_.load(std::memory_order_acquire); }

 private:
  std::string method_;
  std::vector<int> ids_;
  Work work_;
  std::vector<Value> values_;               // slot i written only by engine slot i
  std::vector<std::exception_ptr> errors_;  // likewise
  std::atomic<size_t> remaining_;
  // Futex words: done_ turns 1 once every engine has finished; waiters_ counts the
  // threads that sleep (or are about to) on done_, so the last engine makes the
  // wake syscall only when someone sleeps.
  std::atomic<uint32_t> done_{0};
  mutable std::atomic<uint32_t> waiters_{0};
  Clock::time_point submitted_;
  std::atomic<Clock::rep> finished_{0};
};

}  // namespace tessera::spmd::detail
