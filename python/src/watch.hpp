// python/src/watch.hpp — a long C++ call from Python that Ctrl-C can stop.
//
// The call runs on a thread of its own while the caller waits with the GIL
// released and wakes every few tens of milliseconds to let Python run its
// signal handlers (PyErr_CheckSignals): a KeyboardInterrupt cancels the run
// through its CancellationToken, waits for the call to return (its temporaries
// removed on the way out) and is raised in the caller.
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "tessera/scheduler/options.hpp"

namespace tessera::python {

//! How often the waiting caller lets Python handle signals.
inline constexpr auto kSignalPoll = std::chrono::milliseconds(20);

//! Runs `work` on a thread of its own while the caller, GIL released, lets
//! Python handle signals: a KeyboardInterrupt cancels `cancel` and is raised
//! once `work` has returned; otherwise what `work` threw is rethrown.
//! Called with the GIL held.
template <class F>
void run_watched(F&& work, const CancellationToken& cancel) {
  std::exception_ptr error;
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  std::optional<pybind11::error_already_set> interrupt;
  {
    pybind11::gil_scoped_release unlocked;
    std::thread runner([&] {
      try {
        work();
      } catch (...) {
        error = std::current_exception();
      }
      std::lock_guard lk(mu);
      done = true;
      cv.notify_one();
    });
    std::unique_lock lk(mu);
    while (!cv.wait_for(lk, kSignalPoll, [&] { return done; })) {
      if (interrupt) continue;
      lk.unlock();
      {
        pybind11::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          interrupt.emplace();
          cancel.cancel();
        }
      }
      lk.lock();
    }
    lk.unlock();
    runner.join();
  }
  if (interrupt) throw std::move(*interrupt);
  if (error) std::rethrow_exception(error);
}

}  // namespace tessera::python
