// The calls of a run's callback sets, one at a time (run_hooks.hpp).
#include "run_hooks.hpp"

#include <algorithm>

namespace tessera::detail {

bool has_task_hooks(const std::vector<Callbacks>& callbacks) {
  return std::any_of(callbacks.begin(), callbacks.end(), [](const Callbacks& cb) { return cb.pretask || cb.posttask; });
}

Hooks::Hooks(const std::vector<Callbacks>& callbacks)
    : callbacks_(callbacks), on_tasks_(has_task_hooks(callbacks)),
      on_spills_(std::any_of(callbacks.begin(), callbacks.end(),
                             [](const Callbacks& cb) { return static_cast<bool>(cb.spill); })) {}

bool Hooks::start(const RunState& run) {
  std::lock_guard lk(mutex_);
  try {
    for (const Callbacks& cb : callbacks_) {
      if (cb.start) cb.start(run);
      ++started_;
    }
  } catch (...) {
    start_error_ = std::current_exception();
    return false;
  }
  return true;
}

void Hooks::pretask(const RunState& run, uint32_t task, int worker) {
  std::lock_guard lk(mutex_);
  for (const Callbacks& cb : callbacks_) {
    if (cb.pretask) cb.pretask(run, task, worker);
  }
}

void Hooks::posttask(const RunState& run, uint32_t task, const Value& result, int worker) {
  std::lock_guard lk(mutex_);
  for (const Callbacks& cb : callbacks_) {
    if (cb.posttask) cb.posttask(run, task, result, worker);
  }
}

std::exception_ptr Hooks::finish(const RunState& run, bool failed) {
  std::exception_ptr error;
  std::lock_guard lk(mutex_);
  for (size_t i = 0; i < started_; ++i) {
    const Callbacks& cb = callbacks_[i];
    if (!cb.finish) continue;
    try {
      cb.finish(run, failed);
    } catch (...) {
      if (!error) error = std::current_exception();
    }
  }
  return error;
}

}  // namespace tessera::detail
