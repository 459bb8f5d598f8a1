// tessera/diagnostics/resource_profiler.hpp — memory and CPU over a run.
//
// As dask.diagnostics.ResourceProfiler: a background thread samples, every `dt`
// from start to finish, the process's resident memory (RSS), its CPU use (in
// percent of one core, over the last interval) and the scheduler's bytes and
// results held (RunState). Samples of several runs accumulate until clear();
// times are seconds since the profiler was made. They are written as CSV and as
// an SVG plot of memory over time.
//
// @code
//   tessera::diagnostics::ResourceProfiler res(std::chrono::milliseconds(50));
//   tessera::get(g, "w", {.callbacks = {res.callbacks()}});
//   res.write_csv("resources.csv");
//   res.write_svg("memory.svg");
// @endcode
//
// The profiler must outlive the runs that use its callbacks. One run at a time;
// results() may be called from any thread.
#pragma once

#include <chrono>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "tessera/scheduler/callbacks.hpp"

namespace tessera::diagnostics {

namespace detail {
class Ticker;
}

//! One sample.
struct ResourceSample {
  double time;         //!< seconds since the profiler was made
  size_t rss_bytes;    //!< resident memory of the process
  double cpu_percent;  //!< CPU time over wall time since the previous sample, x100
  size_t held_bytes;   //!< RunState::held_bytes
  size_t held_count;   //!< RunState::held_count
};

//! Samples the process's RSS, CPU and the run's bytes held every `dt` while a run goes, as dask's ResourceProfiler.
class ResourceProfiler {
 public:
  //! Samples every `dt` (from a thread of its own, during runs only).
  explicit ResourceProfiler(std::chrono::duration<double> dt = std::chrono::milliseconds(100));
  ~ResourceProfiler();

  //! The hooks to put in GetOptions::callbacks.
  //! @code
  //!   tessera::get(g, "w", {.callbacks = {res.callbacks()}});
  //! @endcode
  Callbacks callbacks();
  //! The samples so far (one at start, one every dt, one at finish).
  std::vector<ResourceSample> results() const;
  //! Forgets the samples so far.
  void clear();
  //! The moment sample times count from (when the profiler was made).
  std::chrono::steady_clock::time_point origin() const { return origin_; }

  //! `time_s,rss_bytes,cpu_percent,held_bytes,held_count`, one line per sample.
  std::string csv() const;
  //! An SVG line plot of RSS and bytes held over time.
  //! A plot of RSS and bytes held over time; a run with a memory limit draws
  //! the limit as a dashed line.
  std::string svg() const;
  //! Write csv() / svg() to `path`; throw StorageError when they cannot.
  //! @code
  //!   res.write_svg("memory.svg");
  //! @endcode
  void write_csv(const std::string& path) const;
  //! As write_csv, with svg().
  void write_svg(const std::string& path) const;

 private:
  void sample(const RunState& state);

  std::chrono::duration<double> dt_;
  std::chrono::steady_clock::time_point origin_;
  std::unique_ptr<detail::Ticker> ticker_;
  mutable std::mutex m_;
  std::vector<ResourceSample> samples_;
  size_t memory_limit_ = 0;  // of the last run (RunState::memory_limit), drawn as a line
  double last_wall_ = 0, last_cpu_ = 0;  // only the sampling thread (or a hook) touches these
};

//! The process's resident memory in bytes (from /proc/self/statm; 0 when unknown).
size_t resident_bytes();

}  // namespace tessera::diagnostics
