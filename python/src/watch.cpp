// python/src/watch.cpp — the runs a Ctrl-C left running (watch.hpp), and the wait for them at exit.
//
// A run left running still has tasks in Python; the interpreter must not finalize
// under them (a thread that takes the GIL then is ended mid-frame). So, as dask's
// thread pool is joined at exit, the interpreter waits for them at exit; a second
// Ctrl-C during that wait ends the process at once, as SIGINT's default does.
#include "watch.hpp"

#include <csignal>
#include <cstdio>
#include <unistd.h>

namespace py = pybind11;

namespace tessera::python {

namespace {

struct Abandoned {
  std::mutex mu;
  std::condition_variable cv;
  int running = 0;
  bool waits_at_exit = false;
};
Abandoned& abandoned() {
  static auto* a = new Abandoned;  // never destroyed: a run's thread may outlive static destruction
  return *a;
}

// Ends the process as an unhandled SIGINT does (its exit status says so), what
// Python wrote flushed first. GIL held.
[[noreturn]] void end_by_sigint() {
  for (const char* stream : {"stdout", "stderr"}) {
    try {
      py::module_::import("sys").attr(stream).attr("flush")();
    } catch (py::error_already_set&) {}
  }
  std::fflush(nullptr);
  std::signal(SIGINT, SIG_DFL);
  std::raise(SIGINT);
  _exit(128 + SIGINT);
}

// atexit: waits until no run is left running, letting Python handle signals.
void wait_for_abandoned() {
  Abandoned& a = abandoned();
  {
    std::lock_guard lk(a.mu);
    if (a.running <= 0) return;
  }
  py::module_::import("sys").attr("stderr").attr("write")(
      "tessera: waiting for the tasks that were running at Ctrl-C to return (Ctrl-C again to quit now)\n");
  py::gil_scoped_release unlocked;
  std::unique_lock lk(a.mu);
  while (!a.cv.wait_for(lk, kSignalPoll, [&] { return a.running <= 0; })) {
    lk.unlock();
    {
      py::gil_scoped_acquire gil;
      if (PyErr_CheckSignals() != 0) end_by_sigint();
    }
    lk.lock();
  }
}

}  // namespace

void abandoned_run_started() {
  Abandoned& a = abandoned();
  std::lock_guard lk(a.mu);
  ++a.running;
}

void abandoned_run_done() {
  Abandoned& a = abandoned();
  std::lock_guard lk(a.mu);
  --a.running;
  a.cv.notify_all();
}

void wait_for_abandoned_at_exit() {
  Abandoned& a = abandoned();
  {
    std::lock_guard lk(a.mu);
    if (a.waits_at_exit) return;
    a.waits_at_exit = true;
  }
  py::module_::import("atexit").attr("register")(py::cpp_function(&wait_for_abandoned));
}

}  // namespace tessera::python
