// Report: what the hooks record. The page itself is report_html.cpp's.
//
// Bytes held are read in each posttask and spill hook. A run's peak can fall
// between two hooks (a reload or another worker's result in between), so when
// RunState::peak_bytes rose since the last record, the new peak is recorded at
// the hook's time before the current figure: the series' maximum is then the
// run's peak (RunStats::peak_held_bytes), placed at most one hook late.
//
// The critical path is measured in `finish`, while the graph is still there:
// the tasks in the order they finished are a topological order (a task starts
// only after its inputs' posttask), so one pass over them and their
// dependencies gives each task's longest chain of measured times. O(tasks +
// edges) hash lookups.
#include "tessera/diagnostics/report.hpp"

#include <algorithm>

#include <absl/container/flat_hash_map.h>

#include "report_data.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key_split.hpp"
#include "write_file.hpp"

namespace tessera::diagnostics {
namespace {

using Data = Report::Data;

//! The task ids of this run's dependencies of task `t`, aliases followed.
template <typename F>
void for_each_dependency(const Graph& g, const std::vector<int32_t>& task_of, uint32_t node, F&& f) {
  for (const Key& k : g.dependencies(node)) {
    std::optional<uint32_t> i = g.index_of(k);
    // An alias's chain is at most as long as the graph; a cycle cannot have run.
    for (size_t hops = 0; i && task_of[*i] < 0 && g.node(*i).is_alias() && hops < g.size(); ++hops) {
      i = g.index_of(g.node(*i).target());
    }
    if (i && task_of[*i] >= 0) f(static_cast<uint32_t>(task_of[*i]));
  }
}

//! Sets the run's critical path from the tasks it finished (records [first, end)).
void measure_critical_path(Data& d, const RunState& s, size_t first) {
  const Graph& g = s.graph();
  std::vector<int32_t> task_of(g.size(), -1);
  std::vector<uint32_t> node_of(s.num_tasks(), 0);
  for (uint32_t t = 0; t < s.num_tasks(); ++t) {
    if (std::optional<uint32_t> i = g.index_of(s.key(t))) {
      task_of[*i] = static_cast<int32_t>(t);
      node_of[t] = *i;
    }
  }
  std::vector<double> finish(s.num_tasks(), 0.0);  // longest chain ending at the task
  std::vector<uint32_t> length(s.num_tasks(), 0);
  std::vector<int32_t> record_of(s.num_tasks(), -1);
  for (size_t r = first; r < d.tasks.size(); ++r) {
    const Data::Task& rec = d.tasks[r];
    const std::optional<uint32_t> node = g.index_of(rec.key);
    if (!node || task_of[*node] < 0) continue;
    const auto t = static_cast<uint32_t>(task_of[*node]);
    double before = 0;
    uint32_t chain = 0;
    for_each_dependency(g, task_of, node_of[t], [&](uint32_t dep) {
      if (finish[dep] > before) before = finish[dep];
      chain = std::max(chain, length[dep]);
    });
    finish[t] = before + (rec.end - rec.start);
    length[t] = chain + 1;
    record_of[t] = static_cast<int32_t>(r);
  }
  Data::Run& run = d.runs.back();
  for (uint32_t t = 0; t < s.num_tasks(); ++t) {
    if (record_of[t] >= 0 && finish[t] >= run.critical_path_seconds) {
      run.critical_path_seconds = finish[t];
      run.critical_path_tasks = length[t];
    }
  }
}

//! Adds the run's tasks to the totals per group (key_split once per name).
void count_groups(Data& d, const RunState& s) {
  absl::flat_hash_map<const char*, size_t*> by_name;  // interned: one pointer per name while the run's keys live
  for (uint32_t t = 0; t < s.num_tasks(); ++t) {
    const std::string_view name = s.key(t).name();
    size_t*& total = by_name[name.data()];
    if (total == nullptr) total = &d.group_total[key_split(name)];
    ++*total;
  }
}

void record_held(Data& d, const RunState& s, double time) {
  const size_t peak = s.peak_bytes();
  if (peak > d.last_peak) {
    d.held.push_back({time, peak});
    d.last_peak = peak;
  }
  d.held.push_back({time, s.held_bytes()});
}

}  // namespace

Report::Report(ReportOptions options) : d_(std::make_unique<Data>()) {
  d_->options = std::move(options);
  if (d_->options.resource_interval.count() > 0) {
    d_->resources = std::make_unique<ResourceProfiler>(d_->options.resource_interval);
  }
  // The profiler's clock started first: its times are ours plus this offset.
  d_->origin = std::chrono::steady_clock::now();
  if (d_->resources) {
    d_->resources_offset = std::chrono::duration<double>(d_->origin - d_->resources->origin()).count();
  }
}

Report::~Report() = default;

Callbacks Report::callbacks() {
  Data& d = *d_;
  Callbacks res = d.resources ? d.resources->callbacks() : Callbacks{};
  Callbacks cb;
  cb.start = [&d, res](const RunState& s) {
    d.started.assign(s.num_tasks(), 0.0);
    d.started_worker.assign(s.num_tasks(), -1);
    Data::Run run;
    run.start = d.now();
    run.workers = s.num_workers();
    run.tasks = s.num_tasks();
    run.memory_limit = s.memory_limit();
    d.runs.push_back(run);
    d.last_peak = 0;
    count_groups(d, s);
    d.held.push_back({run.start, s.held_bytes()});
    if (res.start) res.start(s);
  };
  cb.pretask = [&d](const RunState&, uint32_t task, int worker) {
    d.started[task] = d.now();
    d.started_worker[task] = worker;
  };
  cb.posttask = [&d](const RunState& s, uint32_t task, const Value& result, int worker) {
    const double end = d.now();
    d.tasks.push_back({s.key(task), &s.task(task).function_name(), worker, static_cast<int>(d.runs.size()) - 1,
                       d.started[task], end, result.nbytes()});
    d.started[task] = -1;  // finished: not among the unfinished of a failed run
    record_held(d, s, end);
  };
  cb.spill = [&d](const RunState& s, const SpillEvent& e) {
    auto at = [&d](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(t - d.origin).count();
    };
    d.spills.push_back({s.key(e.task), e.kind == SpillEvent::Kind::reload, e.bytes, e.worker, at(e.start), at(e.end)});
    record_held(d, s, at(e.end));
  };
  cb.finish = [&d, res](const RunState& s, bool failed) {
    if (res.finish) res.finish(s, failed);
    Data::Run& run = d.runs.back();
    run.end = d.now();
    run.finished = s.num_finished();
    run.peak_bytes = s.peak_bytes();
    run.peak_count = s.peak_count();
    run.spilled_bytes = s.spilled_bytes();
    run.spill_count = s.spill_count();
    run.reload_count = s.reload_count();
    run.failed = failed;
    record_held(d, s, run.end);
    size_t first = d.tasks.size();
    while (first > 0 && d.tasks[first - 1].run == static_cast<int>(d.runs.size()) - 1) --first;
    measure_critical_path(d, s, first);
    if (failed) {
      for (uint32_t t = 0; t < s.num_tasks(); ++t) {
        if (d.started[t] > 0) d.unfinished.push_back({s.key(t), d.started_worker[t], d.started[t]});
      }
    }
    d.started = {};
    d.started_worker = {};
  };
  return cb;
}

void Report::record_error(const std::exception& e) {
  if (const auto* task = dynamic_cast<const TaskError*>(&e)) {
    record_error(task->key().str(), task->function(), task->message());
  } else if (const auto* memory = dynamic_cast<const MemoryLimitError*>(&e)) {
    record_error(memory->task().str(), "", e.what());
  } else {
    record_error("", "", e.what());
  }
}

void Report::record_error(std::string key, std::string function, std::string message) {
  d_->errors.push_back({std::move(key), std::move(function), std::move(message)});
}

void Report::set_command_line(const std::vector<std::string>& words) {
  std::string line;
  for (const std::string& w : words) {
    if (!line.empty()) line += ' ';
    const bool plain = !w.empty() && w.find_first_of(" \t\n'\"\\$`") == std::string::npos;
    if (plain) {
      line += w;
      continue;
    }
    line += '\'';
    for (char c : w) line += c == '\'' ? std::string("'\\''") : std::string(1, c);
    line += '\'';
  }
  d_->options.command_line = std::move(line);
}

size_t Report::num_tasks() const { return d_->tasks.size(); }

std::string Report::html() const { return detail::report_html(*d_); }

void Report::write_html(const std::string& path) const { detail::write_file(path, html()); }

void Report::check_path(const std::string& path) { detail::check_writable(path); }

}  // namespace tessera::diagnostics
