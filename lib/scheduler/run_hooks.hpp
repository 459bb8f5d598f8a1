// A run's callback sets (GetOptions::callbacks) as its loop calls them: which
// kinds of hook are set, so that a run without task hooks pays one branch per
// task; the mutex that keeps two hooks from ever running at once; and which
// sets' start hooks ran, since only those get their finish hook. A pretask,
// posttask or spill hook that throws stops the run (the caller of these calls
// does that: Run::call_pretask); a throwing start or finish hook is reported
// once the run is over.
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <mutex>
#include <vector>

#include "tessera/scheduler/callbacks.hpp"

namespace tessera::detail {

//! Whether any of `callbacks` has a pretask or posttask hook.
bool has_task_hooks(const std::vector<Callbacks>& callbacks);

class Hooks {
 public:
  explicit Hooks(const std::vector<Callbacks>& callbacks);

  //! Whether any set has a pretask or posttask hook.
  bool on_tasks() const { return on_tasks_; }
  //! Whether any set has a spill hook.
  bool on_spills() const { return on_spills_; }

  //! Calls the start hooks in order; false when one threw (start_error()).
  bool start(const RunState& run);
  //! What a start hook threw, or null.
  std::exception_ptr start_error() const { return start_error_; }
  //! Call every pretask / posttask hook; they throw what a hook throws.
  void pretask(const RunState& run, uint32_t task, int worker);
  void posttask(const RunState& run, uint32_t task, const Value& result, int worker);
  //! Calls every spill hook; each exception goes to `failed(error)`, and the
  //! other hooks still run.
  template <class Failed>
  void spill(const RunState& run, const SpillEvent& event, Failed&& failed) {
    std::lock_guard lk(mutex_);
    for (const Callbacks& cb : callbacks_) {
      if (!cb.spill) continue;
      try {
        cb.spill(run, event);
      } catch (...) {
        failed(std::current_exception());
      }
    }
  }
  //! Calls the finish hooks of the sets whose start hook ran; returns the first
  //! exception one threw, or null (every hook runs regardless).
  std::exception_ptr finish(const RunState& run, bool failed);

 private:
  const std::vector<Callbacks>& callbacks_;
  bool on_tasks_ = false, on_spills_ = false;
  size_t started_ = 0;  // callback sets whose start hook ran
  std::exception_ptr start_error_;
  // Taken by every hook call; with task hooks, by every worker for every task,
  // so on a cache line away from the flags every worker reads.
  alignas(64) std::mutex mutex_;
};

}  // namespace tessera::detail
