// Private: independent steps of preparing a graph (order's analyses, a Plan's
// edges beside its order), run at once on the calling thread's task arena.
#pragma once

#include <cstddef>
#include <exception>
#include <utility>

#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "base/sanitizers.hpp"

#if TESSERA_TSAN
#include <thread>
#include <vector>
#endif

namespace tessera::detail {

//! Graphs of fewer nodes take their steps one after another: each step is then
//! too short to pay for waking another thread.
inline constexpr size_t kParallelNodes = 10'000;

namespace in_parallel_detail {

// Whether this thread is running a step. A step's own steps are not isolated
// again: a thread waiting in an isolated region takes only that region's
// tasks, so a nested region of its own would leave the outer waiter idle.
inline thread_local bool in_step = false;

template <class F>
std::exception_ptr run_step(F& f) noexcept {
  const bool was = std::exchange(in_step, true);
  std::exception_ptr error;
  try {
    f();
  } catch (...) {
    error = std::current_exception();
  }
  in_step = was;
  return error;
}

}  // namespace in_parallel_detail

//! Runs the steps of the preparation of a graph of `nodes` nodes: at once when
//! the graph is large enough, else in the order given. The caller runs the
//! first itself and the others wait for a thread, so the longest step goes
//! first. Each step must touch only what the others do not write. They run on
//! the calling thread's task arena, at most its concurrency at a time, so a
//! Plan built inside a one-thread arena (get_sync, get with num_workers = 1)
//! stays on the caller's thread. While it waits for them, the caller runs no
//! other task of the arena (a worker loop of a run whose task is building this
//! Plan would not return until that run ends). An exception from a step is
//! rethrown once every step is done.
template <class First, class... Rest>
void in_parallel(size_t nodes, First&& first, Rest&&... rest) {
  if (nodes < kParallelNodes) {
    first();
    (rest(), ...);
    return;
  }
  std::exception_ptr errors[1 + sizeof...(Rest)];
  size_t k = 1;
#if TESSERA_TSAN
  // ThreadSanitizer cannot follow oneTBB (libtbb is not instrumented): it sees
  // neither the hand-off of a task nor its pool giving a finished task's memory
  // to the next. Under it the steps run on threads of their own, whose start
  // and join it sees, so that it checks what the steps themselves share.
  std::vector<std::thread> threads;
  (threads.emplace_back([&rest, &error = errors[k++]] { error = in_parallel_detail::run_step(rest); }), ...);
  errors[0] = in_parallel_detail::run_step(first);
  for (std::thread& t : threads) t.join();
#else
  auto run_all = [&] {
    tbb::task_group group;
    (group.run([&rest, &error = errors[k++]] { error = in_parallel_detail::run_step(rest); }), ...);
    errors[0] = in_parallel_detail::run_step(first);
    group.wait();
  };
  if (in_parallel_detail::in_step) {
    run_all();
  } else {
    tbb::this_task_arena::isolate(run_all);
  }
#endif
  for (const std::exception_ptr& e : errors) {
    if (e) std::rethrow_exception(e);
  }
}

}  // namespace tessera::detail
