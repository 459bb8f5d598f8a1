#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;

namespace {

int twice(int x) { return 2 * x; }

// x -> a -> b -> c   (a chain; c requested)
Graph chain() {
  Graph g;
  g.put("x", 1);
  g.task("a", twice, ref("x"));
  g.task("b", twice, ref("a"));
  g.task("c", twice, ref("b"));
  return g;
}

// A callback set that writes what it sees into `log`, each line tagged.
Callbacks logger(std::vector<std::string>& log, const std::string& tag) {
  Callbacks cb;
  cb.start = [&log, tag](const RunState& s) { log.push_back(tag + " start " + std::to_string(s.num_tasks())); };
  cb.pretask = [&log, tag](const RunState& s, uint32_t t, int) { log.push_back(tag + " pre " + s.key(t).str()); };
  cb.posttask = [&log, tag](const RunState& s, uint32_t t, const Value& v, int) {
    log.push_back(tag + " post " + s.key(t).str() + "=" + std::to_string(v.as<int>()) + " held " +
                  std::to_string(s.held_count()) + "/" + std::to_string(s.held_bytes()));
  };
  cb.finish = [&log, tag](const RunState& s, bool failed) {
    log.push_back(tag + " finish " + (failed ? "failed" : "ok") + " peak " + std::to_string(s.peak_count()));
  };
  return cb;
}

}  // namespace

TEST_CASE("hooks run start, pretask/posttask around each task, finish; sets combine in order") {
  Graph g = chain();
  std::vector<std::string> log;
  for (int workers : {0, 1, 3}) {
    log.clear();
    GetOptions opts{.num_workers = workers, .callbacks = {logger(log, "A"), logger(log, "B")}};
    if (workers == 0) {
      get_sync(g, "c", opts);
    } else {
      get(g, "c", opts);
    }
    const size_t bytes = sizeof(int);
    std::vector<std::string> expected = {
        "A start 3", "B start 3",
        "A pre a", "B pre a",
        "A post a=2 held 1/" + std::to_string(bytes), "B post a=2 held 1/" + std::to_string(bytes),
        "A pre b", "B pre b",
        "A post b=4 held 1/" + std::to_string(bytes), "B post b=4 held 1/" + std::to_string(bytes),
        "A pre c", "B pre c",
        "A post c=8 held 1/" + std::to_string(bytes), "B post c=8 held 1/" + std::to_string(bytes),
        "A finish ok peak 1", "B finish ok peak 1"};
    CHECK(log == expected);
  }
}

TEST_CASE("finish runs also when the run fails, and says so; the failed task has no posttask") {
  Graph g = chain();
  g.task("b", [](int) -> int { throw std::runtime_error("no b"); }, ref("a"));
  std::vector<std::string> log;
  REQUIRE_THROWS_WITH_AS(get_sync(g, "c", {.callbacks = {logger(log, "A")}}), "task b (lambda) failed: no b",
                         TaskError);
  std::vector<std::string> expected = {"A start 3", "A pre a", "A post a=2 held 1/4", "A pre b",
                                       "A finish failed peak 1"};
  CHECK(log == expected);
}

TEST_CASE("an exception from a hook stops the run and comes out as it is") {
  Graph g = chain();
  std::vector<std::string> log;
  Callbacks bad_start;
  bad_start.start = [](const RunState&) { throw std::logic_error("start hook"); };
  // Only sets whose start ran get a finish.
  REQUIRE_THROWS_WITH_AS(get(g, "c", {.num_workers = 2, .callbacks = {logger(log, "A"), bad_start, logger(log, "B")}}),
                         "start hook", std::logic_error);
  CHECK(log == std::vector<std::string>{"A start 3", "A finish failed peak 0"});

  Callbacks bad_post;
  bad_post.posttask = [](const RunState& s, uint32_t t, const Value&, int) {
    if (s.key(t) == Key("b")) throw std::logic_error("posttask hook");
  };
  int c_runs = 0;
  g.task("c", [&](int x) { ++c_runs; return x; }, ref("b"));
  REQUIRE_THROWS_WITH_AS(get(g, "c", {.num_workers = 2, .callbacks = {bad_post}}), "posttask hook", std::logic_error);
  CHECK(c_runs == 0);
}

TEST_CASE("hooks see bytes held rise and fall as results are made and released") {
  //  x -> v1 (800 bytes) -> s1 (8 bytes) --+
  //  x -> v2 (800 bytes) -> s2 (8 bytes) --+--> total
  Graph g;
  g.put("x", 100);
  auto make = [](int n) { return std::vector<double>(static_cast<size_t>(n)); };
  auto size = [](const std::vector<double>& v) { return static_cast<double>(v.size()); };
  g.task("v1", make, ref("x"));
  g.task("v2", make, ref("x"));
  g.task("s1", size, ref("v1"));
  g.task("s2", size, ref("v2"));
  g.task("total", [](double a, double b) { return a + b; }, ref("s1"), ref("s2"));
  const size_t vec = sizeof(std::vector<double>) + 800, dbl = sizeof(double);
  std::vector<size_t> held;
  Callbacks cb;
  cb.posttask = [&](const RunState& s, uint32_t, const Value&, int) { held.push_back(s.held_bytes()); };
  RunStats stats;
  CHECK(get_sync(g, "total", {.callbacks = {cb}, .stats = &stats}).as<double>() == 200);
  REQUIRE(held.size() == 5);
  // After each vector's sum ran, the vector is gone; the peak is one vector and
  // one sum, or two vectors, depending on the order — never both vectors and a sum.
  CHECK(held.back() == dbl);
  CHECK(stats.peak_held_bytes <= 2 * vec);
  CHECK(stats.peak_held_bytes >= vec + dbl);
  for (size_t h : held) CHECK(h <= 2 * vec);
}
