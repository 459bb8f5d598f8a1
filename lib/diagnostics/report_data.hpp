// What a Report records (report.cpp) and writes as its page's data (report_html.cpp).
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include <absl/container/node_hash_map.h>

#include "tessera/diagnostics/report.hpp"
#include "tessera/graph/key.hpp"

namespace tessera::diagnostics {

struct Report::Data {
  //! One finished task; times in seconds since the report was made.
  struct Task {
    Key key;
    const std::string* function;  // Task::function_name() lives as long as the process
    int worker;
    int run;
    double start, end;
    size_t bytes;
  };
  struct Spill {
    Key key;
    bool reload;
    size_t bytes;
    int worker;
    double start, end;
  };
  //! One `get`: from its start hook to its finish hook.
  struct Run {
    double start = 0, end = 0;
    int workers = 0;
    size_t tasks = 0, finished = 0, memory_limit = 0;
    size_t peak_bytes = 0, peak_count = 0, spilled_bytes = 0, spill_count = 0, reload_count = 0;
    bool failed = false;
    double critical_path_seconds = 0;  //!< the longest chain of dependent tasks, by measured time
    size_t critical_path_tasks = 0;
  };
  //! A task that started and never finished in a failed run.
  struct Unfinished {
    Key key;
    int worker;
    double start;
  };
  struct Error {
    std::string key, function, message;
  };
  //! Bytes held, after a task or a spill event.
  struct Held {
    double time;
    size_t bytes;
  };

  ReportOptions options;
  std::chrono::steady_clock::time_point origin;
  std::unique_ptr<ResourceProfiler> resources;  // null without resource_interval
  double resources_offset = 0;                  // its times minus ours

  std::vector<Task> tasks;
  std::vector<Spill> spills;
  std::vector<Run> runs;
  std::vector<Unfinished> unfinished;
  std::vector<Error> errors;
  std::vector<Held> held;
  std::vector<double> started;  // by task id, during a run: 0 not started, -1 finished
  std::vector<int> started_worker;
  // Tasks per key_split group, over all runs (a node map: hooks keep pointers to its values).
  absl::node_hash_map<std::string, size_t> group_total;
  size_t last_peak = 0;         // RunState::peak_bytes when `held` was last appended

  double now() const { return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin).count(); }
};

namespace detail {
//! The page of `d` (report_html.cpp).
std::string report_html(const Report::Data& d);
}  // namespace detail

}  // namespace tessera::diagnostics
