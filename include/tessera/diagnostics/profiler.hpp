// tessera/diagnostics/profiler.hpp — what ran where and when, as a Chrome trace.
//
// As dask.diagnostics.Profiler: one record per finished task (key, function,
// worker, start, end), written as Chrome trace JSON ("X" events, one track per
// worker) that Perfetto (ui.perfetto.dev) and chrome://tracing open. Records of
// several runs accumulate until clear(); times are seconds since the Profiler
// was made.
//
// @code
//   tessera::diagnostics::Profiler prof;
//   tessera::get(g, "w", {.callbacks = {prof.callbacks()}});
//   prof.write_chrome_trace("trace.json");
// @endcode
//
// The profiler must outlive the runs that use its callbacks. One run at a time.
#pragma once

#include <chrono>
#include <string>
#include <vector>

#include "tessera/graph/key.hpp"
#include "tessera/scheduler/callbacks.hpp"

namespace tessera::diagnostics {

//! One finished task.
struct TaskRecord {
  Key key;
  std::string function;
  int worker;
  double start;  //!< seconds since the Profiler was made
  double end;
};

class Profiler {
 public:
  Profiler();

  //! The hooks to put in GetOptions::callbacks.
  //! @code
  //!   tessera::get(g, "w", {.callbacks = {prof.callbacks()}});
  //! @endcode
  Callbacks callbacks();
  //! Every finished task so far, in the order they finished.
  const std::vector<TaskRecord>& results() const { return results_; }
  void clear() { results_.clear(); }

  //! The records as Chrome trace JSON text.
  std::string chrome_trace() const;
  //! Writes chrome_trace() to `path`; throws StorageError when it cannot.
  //! @code
  //!   prof.write_chrome_trace("trace.json");   // open in ui.perfetto.dev
  //! @endcode
  void write_chrome_trace(const std::string& path) const;

 private:
  double now() const;

  std::chrono::steady_clock::time_point origin_;
  std::vector<double> started_;  // by task id, during a run
  std::vector<TaskRecord> results_;
};

}  // namespace tessera::diagnostics
