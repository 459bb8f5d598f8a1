#include "tessera/diagnostics/profiler.hpp"

#include <set>

#include <absl/strings/str_cat.h>

#include <nlohmann/json.hpp>

#include "tessera/graph/error.hpp"
#include "write_file.hpp"

namespace tessera::diagnostics {

Profiler::Profiler() : origin_(std::chrono::steady_clock::now()) {}

double Profiler::now() const {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
}

Callbacks Profiler::callbacks() {
  Callbacks cb;
  cb.start = [this](const RunState& s) { started_.assign(s.num_tasks(), 0.0); };
  cb.pretask = [this](const RunState&, uint32_t task, int) { started_[task] = now(); };
  cb.posttask = [this](const RunState& s, uint32_t task, const Value&, int worker) {
    results_.push_back({s.key(task), s.task(task).function_name(), worker, started_[task], now()});
  };
  cb.spill = [this](const RunState& s, const SpillEvent& e) {
    auto at = [this](std::chrono::steady_clock::time_point t) {
      return std::chrono::duration<double>(t - origin_).count();
    };
    spills_.push_back({s.key(e.task), e.kind, e.bytes, e.worker, at(e.start), at(e.end)});
  };
  return cb;
}

std::string Profiler::chrome_trace() const {
  using nlohmann::json;
  json events = json::array();
  events.push_back({{"name", "process_name"}, {"ph", "M"}, {"pid", 0}, {"args", {{"name", "tessera"}}}});
  std::set<int> workers;
  for (const TaskRecord& r : results_) workers.insert(r.worker);
  for (const SpillRecord& r : spills_) workers.insert(r.worker);
  for (int w : workers) {
    events.push_back({{"name", "thread_name"}, {"ph", "M"}, {"pid", 0}, {"tid", w},
                      {"args", {{"name", "worker " + std::to_string(w)}}}});
  }
  for (const TaskRecord& r : results_) {
    const std::string key = r.key.str();
    events.push_back({{"name", key},
                      {"cat", r.function},
                      {"ph", "X"},
                      {"ts", r.start * 1e6},
                      {"dur", (r.end - r.start) * 1e6},
                      {"pid", 0},
                      {"tid", r.worker},
                      {"args", {{"key", key}, {"function", r.function}}}});
  }
  for (const SpillRecord& r : spills_) {
    const std::string key = r.key.str();
    const char* kind = r.kind == SpillEvent::Kind::spill ? "spill" : "reload";
    events.push_back({{"name", std::string(kind) + " " + key},
                      {"cat", kind},
                      {"ph", "X"},
                      {"ts", r.start * 1e6},
                      {"dur", (r.end - r.start) * 1e6},
                      {"pid", 0},
                      {"tid", r.worker},
                      {"args", {{"key", key}, {"bytes", r.bytes}}}});
  }
  return json{{"traceEvents", events}, {"displayTimeUnit", "ms"}}.dump();
}

std::string merge_chrome_traces(std::span<const std::string> traces, std::span<const std::string> process_names) {
  using nlohmann::json;
  if (traces.size() != process_names.size()) {
    throw ValueError(absl::StrCat("merge_chrome_traces: expected a process name per trace (", traces.size(),
                                  " traces), found ", process_names.size()));
  }
  json events = json::array();
  for (size_t i = 0; i < traces.size(); ++i) {
    json trace = json::parse(traces[i], nullptr, /*allow_exceptions=*/false);
    if (trace.is_discarded() || !trace.is_object() || !trace.contains("traceEvents") ||
        !trace["traceEvents"].is_array()) {
      const std::string& text = traces[i];
      throw ValueError(absl::StrCat("merge_chrome_traces: trace ", i,
                                    ": expected Chrome trace JSON with a traceEvents array, found \"",
                                    text.substr(0, 40), text.size() > 40 ? "...\"" : "\""));
    }
    for (json& e : trace["traceEvents"]) {
      if (!e.is_object()) continue;
      e["pid"] = i;
      if (e.value("ph", "") == "M" && e.value("name", "") == "process_name") e["args"]["name"] = process_names[i];
      events.push_back(std::move(e));
    }
  }
  return json{{"traceEvents", std::move(events)}, {"displayTimeUnit", "ms"}}.dump();
}

void write_merged_chrome_trace(const std::string& path, std::span<const std::string> traces,
                               std::span<const std::string> process_names) {
  detail::write_file(path, merge_chrome_traces(traces, process_names));
}

void Profiler::write_chrome_trace(const std::string& path) const { detail::write_file(path, chrome_trace()); }

}  // namespace tessera::diagnostics
