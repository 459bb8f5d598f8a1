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
#include <span>
#include <string>
#include <vector>

#include "tessera/graph/key.hpp"
#include "tessera/scheduler/callbacks.hpp"

namespace tessera::diagnostics {

//! One finished task.
struct TaskRecord {
  //! The task's key.
  Key key;
  //! The name of its function.
  std::string function;
  //! The worker that ran it (0 is the caller's thread).
  int worker;
  double start;  //!< seconds since the Profiler was made
  //! Seconds since the Profiler was made, when it finished.
  double end;
};

//! A result moved to disk or back during a run with a memory limit.
struct SpillRecord {
  //! The key of the result that moved.
  Key key;
  //! Spill (to disk) or reload (back to memory).
  SpillEvent::Kind kind;
  //! Its accounted size.
  size_t bytes;
  //! The worker that moved it.
  int worker;
  double start;  //!< seconds since the Profiler was made
  //! Seconds since the Profiler was made, when it was done.
  double end;
};

//! Records every task (and every spill) of the runs it is attached to, and writes them as a Chrome trace.
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
  //! Every spill and reload so far (drawn as `spill KEY` / `reload KEY` events).
  const std::vector<SpillRecord>& spills() const { return spills_; }
  //! Forgets the records so far.
  void clear() {
    results_.clear();
    spills_.clear();
  }

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
  std::vector<SpillRecord> spills_;
};

//! One Chrome trace of several processes from one chrome_trace() text per
//! process (each rank's, in a run across ranks): trace i's events become
//! process i (`pid` i), whose process_name metadata is `process_names[i]`; the
//! tracks inside keep their workers. Times stay as each trace has them: make
//! the Profilers at a common moment (after a barrier) so that they line up.
//! Throws ValueError when the spans differ in length or a trace is not Chrome
//! trace JSON with a traceEvents array.
//! @code
//!   auto texts = tessera::gather_strings(comm, prof.chrome_trace(), 0);   // empty but on rank 0
//!   std::vector<std::string> names = {"rank 0", "rank 1"};
//!   if (comm.rank() == 0) std::string trace = merge_chrome_traces(texts, names);
//! @endcode
std::string merge_chrome_traces(std::span<const std::string> traces, std::span<const std::string> process_names);

//! Writes merge_chrome_traces(traces, process_names) to `path` (through a
//! temporary name, renamed on success); throws StorageError when it cannot.
//! @code
//!   if (comm.rank() == 0) write_merged_chrome_trace("trace.json", texts, names);
//! @endcode
void write_merged_chrome_trace(const std::string& path, std::span<const std::string> traces,
                               std::span<const std::string> process_names);

}  // namespace tessera::diagnostics
