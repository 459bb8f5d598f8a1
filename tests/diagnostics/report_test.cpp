// The HTML report's records, read back from the page's JSON (#data). What the
// page draws from them is checked in a browser by report_browser.py.
#include <doctest/doctest.h>

#include <algorithm>
#include <stdexcept>
#include <string>
#include <thread>

#include <nlohmann/json.hpp>

#include "tessera/diagnostics/report.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;
using namespace std::chrono_literals;

namespace {

//! The page's data, as the page's script reads it.
nlohmann::json page_data(const std::string& html) {
  const std::string open = "<script id=\"data\" type=\"application/json\">";
  const size_t from = html.find(open) + open.size();
  return nlohmann::json::parse(html.substr(from, html.find("</script>", from) - from));
}

size_t occurrences(const std::string& s, const std::string& part) {
  size_t n = 0;
  for (size_t at = s.find(part); at != std::string::npos; at = s.find(part, at + 1)) ++n;
  return n;
}

std::vector<char> block(size_t bytes) { return std::vector<char>(bytes); }

}  // namespace

// a0 -> a1 -> a2 -> a3      (a chain of 4)
// b0 .. b7                   (independent, each read by `all`)
//       all <- a3, b*
TEST_CASE("a report records every task, its bytes, the bytes held and the critical path") {
  Graph g;
  g.task(Key("a-0123456789abcdef0123456789abcdef", {0}), fn("make", block), size_t{1000});
  for (int i = 1; i < 4; ++i) {
    g.task(Key("a-0123456789abcdef0123456789abcdef", {i}), fn("grow", [](const std::vector<char>& v) {
             return std::vector<char>(v.size() + 1000);
           }), ref(Key("a-0123456789abcdef0123456789abcdef", {i - 1})));
  }
  ArgList parts;
  parts.items.emplace_back(ref(Key("a-0123456789abcdef0123456789abcdef", {3})));
  for (int i = 0; i < 8; ++i) {
    g.task(Key("b", {i}), fn("make", block), size_t{100});
    parts.items.emplace_back(ref(Key("b", {i})));
  }
  g.put("all", Task(fn("count", [](const ValueList& xs) { return static_cast<int>(xs.size()); }), parts));
  diagnostics::Report report({.title = "chain", .command_line = "report_test"});
  RunStats stats;
  get(g, "all", {.num_workers = 2, .callbacks = {report.callbacks()}, .stats = &stats});
  CHECK(report.num_tasks() == 13);
  const nlohmann::json d = page_data(report.html());
  REQUIRE(d["runs"].size() == 1);
  CHECK(d["runs"][0]["critical_path_tasks"] == 5);  // a0..a3, all
  CHECK(d["runs"][0]["workers"] == 2);
  CHECK(d["runs"][0]["failed"] == false);
  CHECK(d["tasks"]["name"].size() == 13);
  const auto& held = d["held"]["bytes"];
  CHECK(*std::max_element(held.begin(), held.end()) == stats.peak_held_bytes);
  std::vector<std::string> groups = d["prefixes"].get<std::vector<std::string>>();
  std::sort(groups.begin(), groups.end());
  CHECK(groups == std::vector<std::string>{"a", "all", "b"});
  // Bytes made by a3: 4000 (vector<char> counts its size).
  bool found = false;
  for (size_t i = 0; i < d["tasks"]["name"].size(); ++i) {
    if (d["names"][d["tasks"]["name"][i].get<size_t>()] == "a-0123456789abcdef0123456789abcdef" &&
        d["tasks"]["index"][i] == "3") {
      found = true;
      CHECK(d["tasks"]["bytes"][i].get<size_t>() >= 4000);
    }
  }
  CHECK(found);
  CHECK(d["title"] == "chain");
  CHECK(d["command"] == "report_test");
}

TEST_CASE("a failed run's report names the failing key, function and message, and what never finished") {
  Graph g;
  g.task("ok", fn("make", block), size_t{8});
  g.task("bad", fn("explode", [](const std::vector<char>&) -> int { throw std::runtime_error("boom at row 7"); }),
         ref("ok"));
  diagnostics::Report report;
  try {
    get(g, "bad", {.num_workers = 1, .callbacks = {report.callbacks()}});
    FAIL("the run should have failed");
  } catch (const TaskError& e) {
    report.record_error(e);
  }
  const nlohmann::json d = page_data(report.html());
  REQUIRE(d["errors"].size() == 1);
  CHECK(d["errors"][0]["key"] == "bad");
  CHECK(d["errors"][0]["function"] == "explode");
  CHECK(d["errors"][0]["message"] == "boom at row 7");
  CHECK(d["runs"][0]["failed"] == true);
  REQUIRE(d["unfinished"].size() == 1);
  CHECK(d["unfinished"][0]["key"] == "bad");
  CHECK(d["prefix_total"].size() == d["prefixes"].size());
}

TEST_CASE("a key that looks like markup cannot end the page's data early") {
  Graph g;
  g.task("</script><script>alert(1)</script>", fn("make", block), size_t{8});
  diagnostics::Report report({.title = "<b>title</b>"});
  get(g, "</script><script>alert(1)</script>", {.callbacks = {report.callbacks()}});
  const std::string html = report.html();
  const diagnostics::Report empty;
  CHECK(occurrences(html, "</script>") == occurrences(empty.html(), "</script>"));
  CHECK(html.find("<title>&lt;b&gt;title&lt;/b&gt;</title>") != std::string::npos);
  CHECK(page_data(html)["names"][0] == "</script><script>alert(1)</script>");
}

TEST_CASE("a report samples RSS and CPU when asked, and not otherwise") {
  Graph g;
  g.task("nap", fn("nap", [](int) {
           std::this_thread::sleep_for(30ms);
           return 1;
         }), 0);
  diagnostics::Report with({.resource_interval = 5ms}), without({.resource_interval = 0s});
  get(g, "nap", {.callbacks = {with.callbacks(), without.callbacks()}});
  const nlohmann::json a = page_data(with.html()), b = page_data(without.html());
  CHECK(a["resources"]["rss"].size() >= 2);  // at start and at finish, at least
  CHECK(a["resources"]["rss"][0].get<size_t>() > 0);
  CHECK(b["resources"]["rss"].empty());
}

TEST_CASE("the command line is quoted where a shell would need it") {
  diagnostics::Report report;
  report.set_command_line({"tessera", "graph", "run", "my file.json", "--report", "it's.html"});
  CHECK(page_data(report.html())["command"] == "tessera graph run 'my file.json' --report 'it'\\''s.html'");
}

TEST_CASE("writing a report to a folder that does not exist is a StorageError naming the path") {
  diagnostics::Report report;
  CHECK_THROWS_WITH_AS(report.write_html("/nonexistent-dir/run.html"),
                       "/nonexistent-dir/run.html: cannot open for writing: No such file or directory", StorageError);
}
