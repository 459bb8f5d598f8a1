#include <doctest/doctest.h>

#include <oneapi/tbb/global_control.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "tessera/comm/communicator.hpp"
#include "tessera/diagnostics/profiler.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/resource_profiler.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;
using namespace std::chrono_literals;

namespace {

// n leaves that sleep `nap` each and make `bytes` bytes, summed by one task.
Graph sleepy(int n, std::chrono::microseconds nap, size_t bytes = 8) {
  Graph g;
  std::vector<Arg> parts;
  for (int i = 0; i < n; ++i) {
    g.task(Key("leaf", {i}), fn("nap", [nap, bytes](int) {
      std::this_thread::sleep_for(nap);
      return std::vector<char>(bytes);
    }), i);
    parts.emplace_back(ref(Key("leaf", {i})));
  }
  g.put("total", Task(fn("total", [](const ValueList& xs) { return static_cast<int>(xs.size()); }),
                      ArgList{std::move(parts)}));
  return g;
}

size_t count(const std::string& s, char c) { return static_cast<size_t>(std::count(s.begin(), s.end(), c)); }

}  // namespace

TEST_CASE("the progress bar draws done/total and elapsed time, at most ~10 times a second") {
  std::ostringstream out;
  diagnostics::ProgressBar bar({.out = &out});
  const auto t0 = std::chrono::steady_clock::now();
  get(sleepy(30, 10ms), "total", {.num_workers = 2, .callbacks = {bar.callbacks()}});
  const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const std::string text = out.str();
  CHECK(text.find("] | 100% Completed | 31/31 tasks | ") != std::string::npos);
  CHECK(text.back() == '\n');
  CHECK(count(text, '\r') >= 2);                            // redrawn while running, then the last line
  CHECK(count(text, '\r') <= 1 + static_cast<size_t>(elapsed * 10) + 1);
}

TEST_CASE("the progress bar is silent for runs shorter than its minimum") {
  std::ostringstream out;
  diagnostics::ProgressBar bar({.minimum = 10s, .out = &out});
  get_sync(sleepy(3, 1ms), "total", {.callbacks = {bar.callbacks()}});
  CHECK(out.str().empty());
}

TEST_CASE("the profiler records key, function, worker, start and end of every task") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 3);
  diagnostics::Profiler prof;
  get(sleepy(12, 1ms), "total", {.num_workers = 3, .callbacks = {prof.callbacks()}});
  const auto& rs = prof.results();
  REQUIRE(rs.size() == 13);
  std::set<std::string> keys;
  for (const auto& r : rs) {
    keys.insert(r.key.str());
    CHECK(r.worker >= 0);
    CHECK(r.worker < 3);
    CHECK(r.end >= r.start);
    CHECK(r.function == (r.key == Key("total") ? "total" : "nap"));
  }
  CHECK(keys.size() == 13);
  CHECK(rs.back().key == Key("total"));
  for (size_t i = 0; i + 1 < rs.size(); ++i) CHECK(rs[i].end <= rs.back().start);  // total ran after all leaves

  SUBCASE("as Chrome trace JSON that trace viewers read") {
    const std::string path = "profile_test_trace.json";
    prof.write_chrome_trace(path);
    std::ifstream in(path);
    nlohmann::json j = nlohmann::json::parse(in);
    std::remove(path.c_str());
    REQUIRE(j["traceEvents"].is_array());
    size_t complete = 0;
    std::set<int> named_threads;
    for (const auto& e : j["traceEvents"]) {
      REQUIRE(e.contains("ph"));
      if (e["ph"] == "M") {
        if (e["name"] == "thread_name") named_threads.insert(e["tid"].get<int>());
        continue;
      }
      CHECK(e["ph"] == "X");
      CHECK(e["ts"].is_number());
      CHECK(e["dur"].get<double>() >= 0);
      CHECK(e["pid"] == 0);
      CHECK(named_threads.count(e["tid"].get<int>()) == 1);
      CHECK(keys.count(e["name"].get<std::string>()) == 1);
      CHECK(e["args"]["key"] == e["name"]);
      ++complete;
    }
    CHECK(complete == 13);
  }
}

// A run across two thread ranks, each with its own Profiler: the merged trace
// has a process per rank, named "rank N", and every task of the graph once.
TEST_CASE("merge_chrome_traces: one process per rank, every task of a run across ranks once") {
  const Graph g = sleepy(12, 100us);
  const auto comms = thread_communicators(2);
  std::vector<std::string> gathered;
  std::vector<size_t> ran(2);
  std::vector<std::thread> ranks;
  for (int r = 0; r < 2; ++r) {
    ranks.emplace_back([&, r] {
      Communicator& comm = *comms[static_cast<size_t>(r)];
      diagnostics::Profiler prof;
      get(g, "total", {.num_workers = 1, .callbacks = {prof.callbacks()}, .communicator = comms[static_cast<size_t>(r)]});
      ran[static_cast<size_t>(r)] = prof.results().size();
      std::vector<std::string> texts = gather_strings(comm, prof.chrome_trace(), 0);
      if (r == 0) gathered = std::move(texts);
    });
  }
  for (auto& t : ranks) t.join();
  CHECK(ran[0] > 0);
  CHECK(ran[1] > 0);
  CHECK(ran[0] + ran[1] == 13);
  const std::vector<std::string> names = {"rank 0", "rank 1"};
  const nlohmann::json j = nlohmann::json::parse(diagnostics::merge_chrome_traces(gathered, names));
  std::map<std::string, int> seen;  // task -> times
  std::map<int, std::string> process;
  std::map<int, size_t> tasks_of;
  for (const auto& e : j["traceEvents"]) {
    const int pid = e["pid"].get<int>();
    if (e["ph"] == "M") {
      if (e["name"] == "process_name") process[pid] = e["args"]["name"].get<std::string>();
      continue;
    }
    ++seen[e["name"].get<std::string>()];
    ++tasks_of[pid];
  }
  CHECK(process == std::map<int, std::string>{{0, "rank 0"}, {1, "rank 1"}});
  CHECK(tasks_of[0] == ran[0]);
  CHECK(tasks_of[1] == ran[1]);
  CHECK(seen.size() == 13);
  for (const auto& entry : seen) {
    CAPTURE(entry.first);
    CHECK(entry.second == 1);
  }
}

TEST_CASE("merge_chrome_traces refuses a trace that is not one, and names it") {
  const std::vector<std::string> traces = {diagnostics::Profiler().chrome_trace(), "[1, 2]"};
  const std::vector<std::string> names = {"rank 0", "rank 1"};
  CHECK_THROWS_WITH_AS(diagnostics::merge_chrome_traces(traces, names),
                       "merge_chrome_traces: trace 1: expected Chrome trace JSON with a traceEvents array, found \"[1, 2]\"",
                       ValueError);
  CHECK_THROWS_WITH_AS(diagnostics::merge_chrome_traces(traces, std::span(names).first(1)),
                       "merge_chrome_traces: expected a process name per trace (2 traces), found 1", ValueError);
}

TEST_CASE("writing a trace to a folder that does not exist is a StorageError naming the path") {
  diagnostics::Profiler prof;
  REQUIRE_THROWS_WITH_AS(prof.write_chrome_trace("/nonexistent-dir/t.json"),
                         "/nonexistent-dir/t.json: cannot open for writing: No such file or directory", StorageError);
}

TEST_CASE("the resource profiler samples RSS, CPU and bytes held, as CSV and an SVG plot") {
  diagnostics::ResourceProfiler res(5ms);
  // 20 leaves of 1 MB each, held until the total runs.
  get(sleepy(20, 3ms, 1 << 20), "total", {.num_workers = 2, .callbacks = {res.callbacks()}});
  const auto samples = res.results();
  REQUIRE(samples.size() >= 3);  // start, ticks, finish
  size_t most_held = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    CHECK(samples[i].rss_bytes > 0);
    CHECK(samples[i].cpu_percent >= 0);
    if (i > 0) CHECK(samples[i].time >= samples[i - 1].time);
    most_held = std::max(most_held, samples[i].held_bytes);
  }
  CHECK(samples.front().held_bytes == 0);
  CHECK(most_held >= (1u << 20));
  CHECK(samples.back().held_count == 1);  // only the requested total is left

  const std::string csv = res.csv();
  CHECK(csv.rfind("time_s,rss_bytes,cpu_percent,held_bytes,held_count\n", 0) == 0);
  CHECK(count(csv, '\n') == samples.size() + 1);
  const std::string svg = res.svg();
  CHECK(svg.rfind("<svg xmlns=\"http://www.w3.org/2000/svg\"", 0) == 0);
  CHECK(svg.find("<polyline") != std::string::npos);
  CHECK(svg.find("bytes held by results") != std::string::npos);
  CHECK(svg.find("time since start") != std::string::npos);  // the axis labels (their format once lacked two values)
  CHECK(svg.find(" MiB</text>") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  res.write_svg("resource_test.svg");
  std::ifstream in("resource_test.svg");
  std::stringstream back;
  back << in.rdbuf();
  CHECK(back.str() == svg);
  std::remove("resource_test.svg");
}

TEST_CASE("diagnostics combine in one run, also with a failing one") {
  std::ostringstream out;
  diagnostics::ProgressBar bar({.out = &out});
  diagnostics::Profiler prof;
  diagnostics::ResourceProfiler res(10ms);
  Graph g = sleepy(5, 30ms);
  g.task("bad", fn("bad", [](int) -> int { throw std::runtime_error("nope"); }), ref("total"));
  REQUIRE_THROWS_AS(get(g, "bad", {.num_workers = 2, .callbacks = {bar.callbacks(), prof.callbacks(), res.callbacks()}}),
                    TaskError);
  CHECK(prof.results().size() == 6);
  CHECK(res.results().size() >= 2);
  CHECK(out.str().find("6/7 tasks") != std::string::npos);
}
