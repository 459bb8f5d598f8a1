// python/src/watch.hpp — a long C++ call from Python that Ctrl-C can stop.
//
// The call runs on a thread of its own while the caller waits with the GIL
// released and wakes every few tens of milliseconds to let Python run its
// signal handlers (PyErr_CheckSignals): a KeyboardInterrupt cancels the run
// through its CancellationToken, waits for the call to return (its temporaries
// removed on the way out) and is raised in the caller. tessera.get, whose tasks
// may run Python for minutes, does not wait for them (run_abandonable).
#pragma once

#include <pybind11/pybind11.h>

#include <chrono>
#include <condition_variable>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>

#include "pyvalue.hpp"
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

//! How long a cancelled run may take to stop before the caller leaves it running.
inline constexpr auto kAbandonAfter = std::chrono::milliseconds(200);

//! The count of runs a Ctrl-C left running: one more (by the caller that leaves
//! it), one fewer (by the run's thread once it is done). Thread-safe.
void abandoned_run_started();
void abandoned_run_done();

//! Makes the interpreter wait at exit (atexit) until no run is left running; a
//! Ctrl-C during that wait ends the process as SIGINT does. Idempotent; GIL held.
void wait_for_abandoned_at_exit();

//! Runs `work(*job)` on a thread of its own, as run_watched does, except that a
//! KeyboardInterrupt is raised at once, as dask's does: the run is cancelled and,
//! when it does not stop within kAbandonAfter (a task sleeping or computing for
//! minutes), left to finish on its own. Its running tasks then complete, their
//! results are dropped and its temporaries removed by its thread, which holds the
//! only reference to `job` and drops it with the GIL. At exit the interpreter waits
//! for such runs (a second Ctrl-C ends the process at once). `left_running`: set
//! when the run was left so (the caller must not touch `*job` then). GIL held.
template <class Job, class F>
void run_abandonable(std::shared_ptr<Job> job, F work, const CancellationToken& cancel, bool& left_running) {
  struct Shared {
    std::mutex mu;
    std::condition_variable cv;
    bool done = false;
    bool abandoned = false;
    std::exception_ptr error;
  };
  auto shared = std::make_shared<Shared>();
  std::optional<pybind11::error_already_set> interrupt;
  std::optional<std::chrono::steady_clock::time_point> give_up;
  left_running = false;
  {
    pybind11::gil_scoped_release unlocked;
    std::thread runner([shared, job, work]() mutable {
      try {
        work(*job);
      } catch (...) {
        shared->error = std::current_exception();
      }
      bool abandoned = false;
      {
        std::lock_guard lk(shared->mu);
        shared->done = true;
        abandoned = shared->abandoned;
        shared->cv.notify_one();
      }
      if (!abandoned) return;  // the caller holds `job` and drops it
      {
        WorkerGil gil;
        job.reset();
        shared->error = nullptr;  // may hold a Python exception
        release_deferred();
      }
      abandoned_run_done();
    });
    std::unique_lock lk(shared->mu);
    while (!shared->cv.wait_for(lk, kSignalPoll, [&] { return shared->done; })) {
      if (interrupt) {
        if (std::chrono::steady_clock::now() < *give_up) continue;
        shared->abandoned = true;
        abandoned_run_started();
        break;
      }
      lk.unlock();
      {
        pybind11::gil_scoped_acquire gil;
        if (PyErr_CheckSignals() != 0) {
          interrupt.emplace();
          cancel.cancel();
          give_up = std::chrono::steady_clock::now() + kAbandonAfter;
        }
      }
      lk.lock();
    }
    left_running = shared->abandoned;
    lk.unlock();
    if (left_running) {
      runner.detach();
    } else {
      runner.join();
    }
  }
  if (left_running) wait_for_abandoned_at_exit();
  if (interrupt) throw std::move(*interrupt);
  if (shared->error) std::rethrow_exception(shared->error);
}

}  // namespace tessera::python
