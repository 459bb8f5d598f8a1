// tessera/diagnostics/report.hpp — one HTML file that shows a run.
//
// As dask's `performance_report`: callbacks record every task (key, function,
// worker, start, end, bytes of its result), the bytes held after each task and
// each spill or reload, and, when `resource_interval` is set, the process's RSS
// and CPU (a ResourceProfiler inside the report). write_html() writes one file
// with the data, script and style inlined; it opens in any browser without
// network access. Its panels:
//   - errors (first, when the run failed): the failing key, function and message;
//   - summary: wall time, workers, tasks, peak bytes held, peak RSS, bytes
//     spilled and reloaded, the critical path (the longest chain of dependent
//     tasks, by their measured times) against the wall time, tessera's version,
//     the command line;
//   - task stream: one lane per worker, a bar per task coloured by its key's
//     group (key_split.hpp); hover names key, function, duration and bytes; the
//     wheel zooms and a drag pans the time axis; tasks narrower than a pixel are
//     drawn as one aggregate per pixel and lane;
//   - memory: bytes held over time, the memory limit as a line, spills and
//     reloads as marks, RSS and CPU beside them;
//   - progress by group: tasks done / total, total and mean time, bytes made.
// Records of several runs accumulate (the demo's three runs share one report).
//
// @code
//   tessera::diagnostics::Report report({.command_line = "my_program --size 4GiB"});
//   try {
//     tessera::get(g, "w", {.callbacks = {report.callbacks()}});
//   } catch (const std::exception& e) {
//     report.record_error(e);   // the failing key and message go at the top
//     report.write_html("run.html");
//     throw;
//   }
//   report.write_html("run.html");
// @endcode
//
// Other front ends (the Python module) use callbacks(), record_error(key,
// function, message) and write_html(). The report must outlive the runs that
// use its callbacks. One run at a time; not thread-safe otherwise.
#pragma once

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "tessera/diagnostics/resource_profiler.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/scheduler/callbacks.hpp"

namespace tessera::diagnostics {

//! How a Report is titled and what it samples.
struct ReportOptions {
  //! The page's title.
  std::string title = "tessera run";
  //! Shown in the summary: the command line or the calling program.
  std::string command_line = {};
  //! How often to sample RSS and CPU; zero: not at all.
  std::chrono::duration<double> resource_interval = std::chrono::milliseconds(50);
};

//! Records a run through its callbacks and writes it as one self-contained HTML page (see the file comment).
class Report {
 public:
  //! A report made as `options` says.
  explicit Report(ReportOptions options = {});
  ~Report();
  Report(const Report&) = delete;
  Report& operator=(const Report&) = delete;

  //! The hooks to put in GetOptions::callbacks (or ComputeOptions::callbacks).
  //! @code
  //!   tessera::get(g, "w", {.callbacks = {report.callbacks()}});
  //! @endcode
  Callbacks callbacks();

  //! Records why the run failed, shown at the top of the page: a TaskError's
  //! key, function and original message; another exception's what().
  //! @code
  //!   catch (const std::exception& e) { report.record_error(e); report.write_html("run.html"); throw; }
  //! @endcode
  void record_error(const std::exception& e);
  //! The same, from its parts (`key` and `function` may be empty).
  void record_error(std::string key, std::string function, std::string message);
  //! Sets the command line shown in the summary (words joined by spaces).
  void set_command_line(const std::vector<std::string>& words);

  //! Tasks recorded so far, over all runs.
  size_t num_tasks() const;
  //! The page as HTML text.
  std::string html() const;
  //! Writes html() to `path` (through a temporary name, renamed on success);
  //! throws StorageError when it cannot.
  //! @code
  //!   report.write_html("run.html");
  //! @endcode
  void write_html(const std::string& path) const;
  //! StorageError unless write_html(path) could write there now (its folder
  //! exists and takes a new file; `path` is no folder): checked before a run,
  //! whose result a failure found only at the end would cost.
  //! @code
  //!   tessera::diagnostics::Report::check_path(path);  // then run, then write_html(path)
  //! @endcode
  static void check_path(const std::string& path);

  //! What the hooks record; defined inside the library.
  struct Data;

 private:
  std::unique_ptr<Data> d_;
};

}  // namespace tessera::diagnostics
