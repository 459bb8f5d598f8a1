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
  { std::lock_guard lk(ledger_.lock); }
  const bool failed = hooks_.start_error() || failure_.kind != Failure::Kind::none;
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

  const std::exception_ptr hook_error = hooks_.finish(*this, failed);
  if (options_.stats) {
    *options_.stats = RunStats{plan_.num_tasks(),
                               num_finished(),
                               peak_count(),
                               peak_bytes(),
                               num_workers(),
                               spilled_bytes(),
                               spill_count(),
                               reload_count(),
                               static_cast<double>(budget_.spill_ns.load(std::memory_order_relaxed)) * 1e-9,
                               static_cast<double>(budget_.reload_ns.load(std::memory_order_relaxed)) * 1e-9};
  }
  if (hooks_.start_error()) std::rethrow_exception(hooks_.start_error());
  if (failed || failure_.kind != Failure::Kind::none) throw_failure();
  if (hook_error) std::rethrow_exception(hook_error);
  size_t next = 0;
  return ledger_.collect(plan_.keys(), next);
}

// The failed task's inputs are still held (it never completed, so nothing
// released them): run it once more here, on the caller's thread.
void Run::rerun_failed_task() {
  const uint32_t task = failure_.task;
  const auto deps = plan_.dependencies(task);
  try {
    plan_.task(task).run([&](size_t i) -> const Value& { return ledger_.values[deps[i]]; });
  } catch (const ArgumentTypeError&) {
    failure_ = {Failure::Kind::argument_type, task, std::current_exception()};
  } catch (...) {
    failure_.error = std::current_exception();
  }
  // When the rerun succeeds, the original error stands: the failure did not repeat.
}

void Run::release_all() {
  ledger_.release_all();
  held_count_.store(0, std::memory_order_relaxed);
  held_bytes_.store(0, std::memory_order_relaxed);
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
    case Failure::Kind::cycle: throw CycleError(ledger_.find_cycle());
    case Failure::Kind::callback:
    case Failure::Kind::error:
    case Failure::Kind::none:
      break;
  }
  std::rethrow_exception(failure_.error);
}

}  // namespace tessera::detail
