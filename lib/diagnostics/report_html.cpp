// Report's page: the recorded data as one JSON object, put into the page
// (report_page.html, compiled in as kReportPage by embed_text.py).
//
// The tasks go as columns (one array per field) with names, groups and
// functions as tables, so a 200,000-task run's page stays a few MB: a task
// costs its name's number, its indices, its function's number, its worker,
// start and duration in integer nanoseconds and its bytes. Every '<' in the
// JSON is written \u003c, so no string can close the <script> that holds it.
#include <cmath>
#include <ctime>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_replace.h>
#include <nlohmann/json.hpp>

#include "report_data.hpp"
#include "tessera/graph/key_split.hpp"

namespace tessera::diagnostics::detail {

extern const char kReportPage[];
extern const char kTesseraVersion[];

namespace {

using Data = Report::Data;

std::string json_string(const std::string& s) {
  return nlohmann::json(s).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

long long nanos(double seconds) { return std::llround(seconds * 1e9); }

//! `[a,b,c]` of f(0..n-1).
template <typename F>
void append_array(std::string& out, size_t n, F&& f) {
  out += '[';
  for (size_t i = 0; i < n; ++i) {
    if (i > 0) out += ',';
    f(out, i);
  }
  out += ']';
}

//! Numbers for names, groups and functions, in order of first use.
struct Tables {
  std::vector<std::string> names, groups, funcs;
  std::vector<uint32_t> name_group;
  absl::flat_hash_map<std::string, uint32_t> name_id, group_id, func_id;

  static uint32_t id(absl::flat_hash_map<std::string, uint32_t>& ids, std::vector<std::string>& list,
                     const std::string& s) {
    auto [it, inserted] = ids.try_emplace(s, static_cast<uint32_t>(list.size()));
    if (inserted) list.push_back(s);
    return it->second;
  }
  uint32_t name(std::string_view n) {
    const std::string s(n);
    const size_t before = names.size();
    const uint32_t i = id(name_id, names, s);
    if (names.size() > before) name_group.push_back(group(key_split(s)));
    return i;
  }
  uint32_t group(const std::string& g) { return id(group_id, groups, g); }
  uint32_t func(const std::string& f) { return id(func_id, funcs, f); }
};

std::string now_utc() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buf;
}

std::string index_text(const Key& k) {
  if (!k.is_tuple()) return "null";
  std::string s = "\"";
  for (size_t a = 0; a < k.index().size(); ++a) absl::StrAppend(&s, a > 0 ? "," : "", k.index()[a]);
  return s + "\"";
}

std::string data_json(const Data& d) {
  Tables tab;
  std::vector<uint32_t> name_of(d.tasks.size()), func_of(d.tasks.size());
  for (size_t i = 0; i < d.tasks.size(); ++i) {
    name_of[i] = tab.name(d.tasks[i].key.name());
    func_of[i] = tab.func(*d.tasks[i].function);
  }
  // Groups of tasks that never ran (a failed run) still get a row of progress.
  for (const auto& [group, total] : d.group_total) tab.group(group);
  std::string o = "{";
  absl::StrAppend(&o, "\"title\":", json_string(d.options.title), ",\"command\":", json_string(d.options.command_line),
                  ",\"version\":", json_string(kTesseraVersion), ",\"created\":", json_string(now_utc()));
  o += ",\"runs\":";
  append_array(o, d.runs.size(), [&](std::string& out, size_t i) {
    const Data::Run& r = d.runs[i];
    absl::StrAppend(&out, "{\"start\":", nanos(r.start), ",\"end\":", nanos(r.end), ",\"workers\":", r.workers,
                    ",\"tasks\":", r.tasks, ",\"finished\":", r.finished, ",\"memory_limit\":", r.memory_limit,
                    ",\"peak_bytes\":", r.peak_bytes, ",\"peak_count\":", r.peak_count,
                    ",\"spilled_bytes\":", r.spilled_bytes, ",\"spill_count\":", r.spill_count,
                    ",\"reload_count\":", r.reload_count, ",\"failed\":", r.failed ? "true" : "false",
                    ",\"critical_path\":", nanos(r.critical_path_seconds),
                    ",\"critical_path_tasks\":", r.critical_path_tasks, "}");
  });
  auto strings = [&](const std::vector<std::string>& v) {
    append_array(o, v.size(), [&](std::string& out, size_t i) { out += json_string(v[i]); });
  };
  o += ",\"names\":";
  strings(tab.names);
  o += ",\"prefixes\":";
  strings(tab.groups);
  o += ",\"name_prefix\":";
  append_array(o, tab.name_group.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, tab.name_group[i]); });
  o += ",\"prefix_total\":";
  append_array(o, tab.groups.size(), [&](std::string& out, size_t i) {
    auto it = d.group_total.find(tab.groups[i]);
    absl::StrAppend(&out, it == d.group_total.end() ? 0 : it->second);
  });
  o += ",\"funcs\":";
  strings(tab.funcs);
  const auto& T = d.tasks;
  auto column = [&](const char* name, auto f) {
    absl::StrAppend(&o, ",\"", name, "\":");
    append_array(o, T.size(), [&](std::string& out, size_t i) { f(out, i); });
  };
  o += ",\"tasks\":{\"_\":0";
  column("name", [&](std::string& out, size_t i) { absl::StrAppend(&out, name_of[i]); });
  column("index", [&](std::string& out, size_t i) { out += index_text(T[i].key); });
  column("func", [&](std::string& out, size_t i) { absl::StrAppend(&out, func_of[i]); });
  column("worker", [&](std::string& out, size_t i) { absl::StrAppend(&out, T[i].worker); });
  column("run", [&](std::string& out, size_t i) { absl::StrAppend(&out, T[i].run); });
  column("start", [&](std::string& out, size_t i) { absl::StrAppend(&out, nanos(T[i].start)); });
  column("dur", [&](std::string& out, size_t i) { absl::StrAppend(&out, nanos(T[i].end - T[i].start)); });
  column("bytes", [&](std::string& out, size_t i) { absl::StrAppend(&out, T[i].bytes); });
  o += "}";
  o += ",\"held\":{\"t\":";
  append_array(o, d.held.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, nanos(d.held[i].time)); });
  o += ",\"bytes\":";
  append_array(o, d.held.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, d.held[i].bytes); });
  o += "}";
  const auto& S = d.spills;
  o += ",\"spills\":{\"kind\":";
  append_array(o, S.size(), [&](std::string& out, size_t i) { out += S[i].reload ? '1' : '0'; });
  o += ",\"start\":";
  append_array(o, S.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, nanos(S[i].start)); });
  o += ",\"dur\":";
  append_array(o, S.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, nanos(S[i].end - S[i].start)); });
  o += ",\"bytes\":";
  append_array(o, S.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, S[i].bytes); });
  o += ",\"worker\":";
  append_array(o, S.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, S[i].worker); });
  o += ",\"key\":";
  append_array(o, S.size(), [&](std::string& out, size_t i) { out += json_string(S[i].key.str()); });
  o += "}";
  const std::vector<ResourceSample> samples = d.resources ? d.resources->results() : std::vector<ResourceSample>{};
  o += ",\"resources\":{\"t\":";
  append_array(o, samples.size(), [&](std::string& out, size_t i) {
    absl::StrAppend(&out, nanos(samples[i].time - d.resources_offset));
  });
  o += ",\"rss\":";
  append_array(o, samples.size(), [&](std::string& out, size_t i) { absl::StrAppend(&out, samples[i].rss_bytes); });
  o += ",\"cpu\":";
  append_array(o, samples.size(), [&](std::string& out, size_t i) {
    absl::StrAppend(&out, std::lround(samples[i].cpu_percent * 10) / 10.0);
  });
  o += "},\"errors\":";
  append_array(o, d.errors.size(), [&](std::string& out, size_t i) {
    const Data::Error& e = d.errors[i];
    absl::StrAppend(&out, "{\"key\":", json_string(e.key), ",\"function\":", json_string(e.function),
                    ",\"message\":", json_string(e.message), "}");
  });
  o += ",\"unfinished\":";
  append_array(o, d.unfinished.size(), [&](std::string& out, size_t i) {
    const Data::Unfinished& u = d.unfinished[i];
    absl::StrAppend(&out, "{\"key\":", json_string(u.key.str()), ",\"worker\":", u.worker,
                    ",\"start\":", nanos(u.start), "}");
  });
  o += "}";
  return absl::StrReplaceAll(o, {{"<", "\\u003c"}});
}

std::string html_escape(const std::string& s) {
  return absl::StrReplaceAll(s, {{"&", "&amp;"}, {"<", "&lt;"}, {">", "&gt;"}, {"\"", "&quot;"}});
}

}  // namespace

std::string report_html(const Data& d) {
  const std::string_view page(kReportPage);
  const size_t title = page.find("@TITLE@"), data = page.find("@DATA@");
  std::string out;
  out.reserve(page.size() + d.tasks.size() * 48);
  absl::StrAppend(&out, absl::string_view(page.data(), title), html_escape(d.options.title),
                  absl::string_view(page.data() + title + 7, data - title - 7), data_json(d),
                  absl::string_view(page.data() + data + 6, page.size() - data - 6));
  return out;
}

}  // namespace tessera::diagnostics::detail
