// `tessera graph inspect | dot | run` on good and bad graph files.
#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include <nlohmann/json.hpp>

#include "tool_test.hpp"

using tessera::tool_test::data;
using tessera::tool_test::read_text;
using tessera::tool_test::run_tessera;

namespace {

bool contains(const std::string& text, const std::string& part) { return text.find(part) != std::string::npos; }

size_t count(const std::string& text, const std::string& part) {
  size_t n = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++n;
  return n;
}

}  // namespace

// diamond.json:   a (1000 B)
//                /         \    .
//          b (100 B)     ('c', 0) (200 B)
//                \         /
//                  d (8 B)         requested
TEST_CASE("inspect --json gives tessera's figures beside dask's") {
  auto r = run_tessera("graph inspect --json " + data("diamond.json"));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["name"] == "diamond");
  CHECK(j["tasks"] == 4);
  CHECK(j["edges"] == 4);
  CHECK(j["outputs"] == 1);
  CHECK(j["critical_path"] == 3);
  CHECK(j["order_max_pressure"] == 2);
  // a and one of b, c are held together before a is released.
  CHECK(j["sync_max_held"] == 2);
  const auto bytes = j["sync_max_held_bytes"].get<uint64_t>();
  CHECK((bytes == 1100 || bytes == 1200));
  CHECK(j["dask"]["order_max_pressure"] == 2);
  CHECK(j["dask"]["sync_max_held"] == 2);
  CHECK(j["dask"]["sync_max_held_bytes"] == 1200);
}

TEST_CASE("inspect prints a table with a dask column") {
  auto r = run_tessera("graph inspect " + data("diamond.json"));
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "diamond"));
  CHECK(contains(r.out, "critical path"));
  CHECK(contains(r.out, "dask"));
  CHECK(contains(r.out, "1200"));  // dask's sync_max_held_bytes
}

// chains_noref.json: x0 -> x1 -> x2 (10 B each), y0 -> y1 (20 B each); x2 and y1 requested.
TEST_CASE("inspect without a reference leaves dask's figures out") {
  auto r = run_tessera("graph inspect --json " + data("chains_noref.json"));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["tasks"] == 5);
  CHECK(j["critical_path"] == 3);
  CHECK(j["dask"].is_null());
  // One chain's output is held while the other chain runs, one link at a time.
  CHECK(j["sync_max_held"] == 2);
  CHECK(j["sync_max_held_bytes"] == 30);
  auto text = run_tessera("graph inspect " + data("chains_noref.json"));
  CHECK(contains(text.out, "-"));
}

TEST_CASE("dot draws every node coloured by priority and every edge") {
  auto r = run_tessera("graph dot " + data("diamond.json"));
  REQUIRE(r.status == 0);
  CHECK(r.out.rfind("digraph \"diamond\" {", 0) == 0);
  CHECK(count(r.out, "fillcolor=") == 4);
  CHECK(count(r.out, " -> ") == 4);
  CHECK(contains(r.out, "label=\"c (0)\\ninc"));  // as dask's visualize: key_split of the name, the indices
  CHECK(contains(r.out, "label=\"a\\nload #0\", fillcolor=\"0.667"));  // a runs first: blue
  CHECK(contains(r.out, "label=\"d\\nadd #3\", fillcolor=\"0.000"));   // d runs last: red
}

TEST_CASE("dot --color memory colours by bytes: the largest result reddest") {
  auto r = run_tessera("graph dot --color memory " + data("diamond.json"));
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "label=\"a\\nload #0\", fillcolor=\"0.000 0.800 1.000\""));  // 1000 B, the most
  CHECK(contains(r.out, "label=\"d\\nadd #3\", fillcolor=\"0.000 0."));
  auto bad = run_tessera("graph dot --color size " + data("diamond.json"));
  CHECK(bad.status == 2);
  CHECK(contains(bad.err, "--color expects order or memory, got 'size'"));
}

// tree_sum.json: 256 random_sample blocks side by side, summed in a tree: drawn
// node by node it is 74,000 pt wide.
TEST_CASE("dot collapses a wide graph to one node per key group and depth, and says so") {
  const std::string tree_sum = std::string(std::getenv("TESSERA_SOURCE_ROOT")) + "/tests/data/graphs/tree_sum.json";
  auto r = run_tessera("graph dot " + tree_sum);
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "597 tasks, collapsed: a node is the tasks of one key group at one depth"));
  CHECK(contains(r.out, "[label=\"random_sample\\n256 tasks, depth 0\\n"));
  CHECK(contains(r.out, "[label=\"sum-aggregate\\n1 task, depth "));
  CHECK(count(r.out, "[label=\"") < 20);
  CHECK(!contains(r.out, "d86e"));  // no token in any label
}

TEST_CASE("run --report writes the HTML report; a failed run writes it too, with the error") {
  const std::string page = "tool_test_report.html";
  auto r = run_tessera("graph run --workers 2 --report " + page + " " + data("diamond.json"));
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "report                " + page));
  std::string html = read_text(page);
  CHECK(contains(html, "\"title\":\"diamond (tessera graph run)\""));
  CHECK(contains(html, "\"errors\":[]"));
  // The command line as given, every option in its place.
  CHECK(contains(html, "\"command\":\"tessera graph run --workers 2 --report " + page + " "));
  std::remove(page.c_str());
  auto failed = run_tessera("graph run --memory-limit 500 --report " + page + " " + data("diamond.json"));
  CHECK(failed.status == 1);
  html = read_text(page);
  // The refusal names a task whose inputs and result cannot fit (b reads a's 1000 bytes).
  CHECK(contains(html, "\"errors\":[{\"key\":\"b\""));
  CHECK(contains(html, "memory limit of 500 bytes"));
  std::remove(page.c_str());
}

TEST_CASE("run prints the wall time and the memory held") {
  auto r = run_tessera("graph run --workers 2 " + data("diamond.json"));
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, "4 tasks on 2 worker(s)"));
  CHECK(contains(r.out, "results held at most  2"));
  CHECK(contains(r.out, "peak bytes held"));
}

TEST_CASE("malformed files are refused naming the file and the problem, exit 2") {
  struct Case {
    const char* command;
    std::string file;
    const char* says;
  };
  const Case cases[] = {
      {"inspect", data("bad_json.json"), "JSON"},
      {"dot", data("missing_dep.json"), "nope"},  // a dependency that is not a key
      {"run", data("cycle.json"), " -> "},        // the cycle, printed
      {"inspect", "no/such/graph.json", "no/such/graph.json"},
  };
  for (const Case& c : cases) {
    CAPTURE(c.file);
    auto r = run_tessera(std::string("graph ") + c.command + " " + c.file);
    CHECK(r.status == 2);
    CHECK(r.err.rfind("tessera: " + c.file, 0) == 0);
    CHECK(contains(r.err, c.says));
    CHECK(r.out.empty());
  }
}

TEST_CASE("run: a task's nbytes past what can be allocated is an error naming it, not a library's message") {
  const std::string file =
      (std::filesystem::temp_directory_path() / ("tessera-huge-" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(file) << R"({"format": "tessera-graph/1", "name": "huge", "tasks": [
    {"key": "a", "deps": [], "func": "f", "nbytes": 9223372036854775808}], "outputs": ["a"]})";
  auto r = run_tessera("graph run " + file);
  CHECK(r.status == 1);
  CHECK(contains(r.err, "task a (f) failed: expected a result of nbytes this process can allocate, found "
                        "9223372036854775808 bytes"));
  CHECK(!contains(r.err, "_M_default_append"));
  std::filesystem::remove(file);
}

TEST_CASE("bad usage prints the usage and exits with 2") {
  struct Case {
    const char* args;
    const char* says;
  };
  const Case cases[] = {
      {"graph", "expected a command (inspect, dot, run)"},
      {"graph frobnicate x.json", "not expected: x.json frobnicate"},
      {"graph inspect", "FILE.json is required"},
      {"graph inspect a.json b.json", "not expected: b.json"},
      {"graph inspect --bogus a.json", "not expected: --bogus"},
      {"graph run a.json --workers", "--workers: 1 required"},
      {"graph run a.json --workers many", "--workers: Value many not in range 0 to 1024"},
      {"graph run a.json --memory-limit 12Q", "--memory-limit: unknown unit \"q\" in byte size \"12Q\""},
  };
  for (const Case& c : cases) {
    CAPTURE(c.args);
    auto r = run_tessera(c.args);
    CHECK(r.status == 2);
    CHECK(contains(r.err, c.says));
    CHECK(contains(r.err, "Usage: tessera graph"));
  }
}

TEST_CASE("run --profile writes a Chrome trace of every task; --progress draws on stderr") {
  const std::string trace = "tool_test_trace.json";
  auto r = run_tessera("graph run --workers 2 --progress --profile " + trace + " " + data("diamond.json"));
  REQUIRE(r.status == 0);
  CHECK(contains(r.out, trace));
  CHECK(contains(r.err, "100% Completed | 4/4 tasks"));
  const auto j = nlohmann::json::parse(read_text(trace));
  const auto& events = j.is_array() ? j : j["traceEvents"];
  size_t tasks = 0;
  for (const auto& e : events) tasks += e.value("ph", "") == "X";
  CHECK(tasks == 4);
  std::remove(trace.c_str());
}

// huge_result.json: one task recording a result of 2^62 bytes, more than any
// machine has. Measuring it must not allocate it.
TEST_CASE("inspect measures a file's recorded sizes without allocating them") {
  auto r = run_tessera("graph inspect --json " + data("huge_result.json"));
  REQUIRE(r.status == 0);
  const auto j = nlohmann::json::parse(r.out);
  CHECK(j["sync_max_held"] == 1);
  CHECK(j["sync_max_held_bytes"].get<uint64_t>() == uint64_t{1} << 62);
}

TEST_CASE("run --memory-limit refuses a task whose recorded result cannot fit, before allocating it") {
  auto r = run_tessera("graph run --memory-limit 32MiB " + data("huge_result.json"));
  CHECK(r.status == 1);
  CHECK(contains(r.err, "memory limit of 32.0 MiB (33554432) cannot be met: task big needs"));
  CHECK(contains(r.err, "(4611686018427387904) for its inputs and its result together"));
  CHECK(r.out.empty());
}

// many_outputs.json: ('out', 0) ... ('out', 23), 8 KiB each, all requested. A
// run returns them in memory together: 192 KiB.
TEST_CASE("run --memory-limit refuses requested results that do not fit in the limit together") {
  auto r = run_tessera("graph run --workers 2 --memory-limit 32KiB " + data("many_outputs.json"));
  CHECK(r.status == 1);
  // The fifth result is the first past 32 KiB.
  CHECK(contains(r.err, "task ('out', 4) needs 40.0 KiB (40960) with the requested results before it"));
  CHECK(contains(r.err, "(24 requested, 196608 bytes in all)"));
  CHECK(r.out.empty());
  auto fits = run_tessera("graph run --workers 2 --memory-limit 192KiB " + data("many_outputs.json"));
  CHECK(fits.status == 0);
  CHECK(contains(fits.out, "24 tasks on"));
}

// A crafted file names its graph and a key with terminal escape sequences (a
// new window title, a cleared screen): printed, they are escapes, not commands.
TEST_CASE("inspect and run print the names and keys of a file with their control characters escaped") {
  const std::string file =
      (std::filesystem::temp_directory_path() / ("tessera-escapes-" + std::to_string(::getpid()) + ".json")).string();
  std::ofstream(file) << R"({"format": "tessera-graph/1", "name": "t\u001b]0;owned\u0007\u001b[2J\u009b", "tasks": [
    {"key": "k\u001b[2J", "deps": [], "func": "f", "nbytes": 9223372036854775808}], "outputs": ["k\u001b[2J"]})";
  auto inspect = run_tessera("graph inspect " + file);
  REQUIRE_MESSAGE(inspect.status == 0, inspect.err);
  CHECK(contains(inspect.out, "t\\x1b]0;owned\\x07\\x1b[2J\\u009b ("));
  auto r = run_tessera("graph run " + file);
  CHECK(r.status == 1);
  CHECK(contains(r.err, "k\\x1b[2J"));
  for (const std::string& printed : {inspect.out, inspect.err, r.out, r.err}) {
    CHECK(!contains(printed, "\x1b"));
    CHECK(!contains(printed, "\x07"));
    CHECK(!contains(printed, "\xc2\x9b"));
  }
  std::filesystem::remove(file);
}

TEST_CASE("run: a --report that cannot be written is refused before the run") {
  const std::string folder = std::filesystem::temp_directory_path().string();
  for (const std::string& report : {folder, folder + "/tessera-no-such-folder/r.html"}) {
    CAPTURE(report);
    auto r = run_tessera("graph run --report " + report + " " + data("diamond.json"));
    CHECK(r.status == 2);
    CHECK(r.err.rfind("tessera: " + report + ": --report: ", 0) == 0);
    CHECK(r.out.empty());  // nothing ran
  }
}
