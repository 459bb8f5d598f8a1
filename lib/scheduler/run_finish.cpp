// The end of a Run, on the caller's thread once every worker returned: rerun a
// failed task when asked, release what a failed run held, call the finish hooks,
// and hand back the requested values or the run's error.
#include <absl/strings/str_cat.h>

#include "run.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::detail {

Result Run::finish() {
  // Every worker's last step ended with an unlock; this orders all they did
  // before what follows (failure_ is read, values are released or handed out).
  { std::lock_guard lk(lock_); }
  const bool failed = start_error_ || failure_.kind != Failure::Kind::none;
  if (failure_.kind == Failure::Kind::task && options_.rerun_exceptions_locally) rerun_failed_task();
  if (failed) {
    release_all();
  } else {
    try {
      reload_requested();
    } catch (...) {
      failure_ = {Failure::Kind::error, 0, std::current_exception()};
      release_all();
    }
  }

  std::exception_ptr hook_error;
  {
    std::lock_guard lk(hooks_);
    for (size_t i = 0; i < started_; ++i) {
      const Callbacks& cb = options_.callbacks[i];
      if (!cb.finish) continue;
      try {
        cb.finish(*this, failed);
      } catch (...) {
        if (!hook_error) hook_error = std::current_exception();
      }
    }
  }
  if (options_.stats) {
    *options_.stats = RunStats{plan_.num_tasks(), num_finished(), peak_count(), peak_bytes(), num_workers(),
                               spilled_bytes(), spill_count(), reload_count(),
                               static_cast<double>(spill_ns_.load(std::memory_order_relaxed)) * 1e-9,
                               static_cast<double>(reload_ns_.load(std::memory_order_relaxed)) * 1e-9};
  }
  if (start_error_) std::rethrow_exception(start_error_);
  if (failed || failure_.kind != Failure::Kind::none) throw_failure();
  if (hook_error) std::rethrow_exception(hook_error);
  size_t next = 0;
  return collect(plan_.keys(), next);
}

// The failed task's inputs are still held (it never completed, so nothing
// released them): run it once more here, on the caller's thread.
void Run::rerun_failed_task() {
  const uint32_t task = failure_.task;
  const auto deps = plan_.dependencies(task);
  try {
    plan_.task(task).run([&](size_t i) -> const Value& { return values_[deps[i]]; });
  } catch (const ArgumentTypeError&) {
    failure_ = {Failure::Kind::argument_type, task, std::current_exception()};
  } catch (...) {
    failure_.error = std::current_exception();
  }
  // When the rerun succeeds, the original error stands: the failure did not repeat.
}

void Run::release_all() {
  for (uint32_t u = 0; u < plan_.size(); ++u) values_[u] = Value();
  held_count_.store(0, std::memory_order_relaxed);
  held_bytes_.store(0, std::memory_order_relaxed);
}

Result Run::collect(const Keys& keys, size_t& next) const {
  if (keys.is_key()) return Result(values_[plan_.requested()[next++]]);
  std::vector<Result> items;
  items.reserve(keys.items().size());
  for (const Keys& k : keys.items()) items.push_back(collect(k, next));
  return Result(std::move(items));
}

void Run::throw_failure() const {
  const uint32_t t = failure_.task;
  switch (failure_.kind) {
    case Failure::Kind::task:
      try {
        std::rethrow_exception(failure_.error);
      } catch (...) {
        // TaskError with the original nested: std::rethrow_if_nested(e) throws it.
        std::throw_with_nested(TaskError(plan_.key(t), plan_.task(t).function_name(), failure_.error));
      }
    case Failure::Kind::argument_type:
      throw TypeError(absl::StrCat("task ", plan_.key(t).brief(), " (", plan_.task(t).function_name(),
                                   "): ", describe(failure_.error)));
    case Failure::Kind::cancelled:
      throw Cancelled(absl::StrCat("run cancelled: ", num_finished(), " of ", plan_.num_tasks(),
                                   " tasks had finished"));
    case Failure::Kind::cycle:
      throw CycleError(find_cycle());
    case Failure::Kind::callback:
    case Failure::Kind::error:
    case Failure::Kind::none:
      break;
  }
  std::rethrow_exception(failure_.error);
}

// The run stalled: every unfinished task still waits on an unfinished input, so
// walking from one to such an input must come back to a task already seen.
std::vector<Key> Run::find_cycle() const {
  const uint32_t nt = plan_.num_tasks();
  auto unfinished = [&](uint32_t u) { return u < nt && waiting_[u].load(std::memory_order_relaxed) > 0; };
  std::vector<int64_t> seen_at(nt, -1);
  std::vector<uint32_t> path;
  uint32_t u = 0;
  while (!unfinished(u)) ++u;
  while (seen_at[u] < 0) {
    seen_at[u] = static_cast<int64_t>(path.size());
    path.push_back(u);
    for (uint32_t d : plan_.dependencies(u)) {
      if (unfinished(d)) {
        u = d;
        break;
      }
    }
  }
  std::vector<Key> cycle;
  for (size_t i = static_cast<size_t>(seen_at[u]); i < path.size(); ++i) cycle.push_back(plan_.key(path[i]));
  cycle.push_back(plan_.key(u));
  return cycle;
}

}  // namespace tessera::detail
