#include <doctest/doctest.h>

#include <exception>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/graph/compiled.hpp"
#include "tessera/optimize/order.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/plan.hpp"
#include "testing.hpp"

using namespace tessera;
using tessera::testing::Counted;

// Not static: the test executable exports its symbols, so a task names them.
int inc(int x) { return x + 1; }
int add(int a, int b) { return a + b; }
int boom(int) { throw std::runtime_error("kaboom"); }

namespace {

//   x=1  y=2
//    |    |
//    z    |      z = inc(x), w = add(z, y)
//     \  /
//      w
Graph small_graph() {
  Graph g;
  g.put("x", 1);
  g.put("y", 2);
  g.task("z", inc, ref("x"));
  g.task("w", add, ref("z"), ref("y"));
  return g;
}

}  // namespace

TEST_CASE("results come back in the nested shape of the keys") {
  Graph g = small_graph();
  CHECK(get_sync(g, "w").as<int>() == 4);
  Result r = get_sync(g, {"z", {"w", "x"}, {}});
  REQUIRE(r.size() == 3);
  CHECK(r[0].as<int>() == 2);
  CHECK(r[1][0].as<int>() == 4);
  CHECK(r[1][1].as<int>() == 1);
  CHECK(r[2].size() == 0);
  CHECK(get_sync(g, std::vector<Key>{"w", "w"})[1].as<int>() == 4);
}

TEST_CASE("a Result says what it is when used as the other shape") {
  Graph g = small_graph();
  Result r = get_sync(g, {"z", "w"});
  REQUIRE_THROWS_WITH_AS(r.as<int>(), "expected a single value, found a list of 2 results (index it with [i])",
                         TypeError);
  REQUIRE_THROWS_WITH_AS(get_sync(g, "w")[0], "expected a list of results, found a single value of type int",
                         TypeError);
}

TEST_CASE("aliases give their target's value; literals come back as they are") {
  Graph g = small_graph();
  g.alias("result", "w");
  g.alias("again", "result");
  g.task("v", add, ref("again"), ref("w"));  // reads w twice, once through aliases
  Result r = get_sync(g, {"again", "x", "v"});
  CHECK(r[0].as<int>() == 4);
  CHECK(r[1].as<int>() == 1);
  CHECK(r[2].as<int>() == 8);
  Result same = get_sync(g, {"w", "result"});
  CHECK(same[0].value().same_object(same[1].value()));
}

TEST_CASE("only what the requested keys need runs") {
  Graph g = small_graph();
  int side_runs = 0;
  g.task("side", [&](int x) { ++side_runs; return x; }, ref("w"));
  RunStats stats;
  CHECK(get_sync(g, "w", {.stats = &stats}).as<int>() == 4);
  CHECK(side_runs == 0);
  CHECK(stats.tasks == 2);
  CHECK(stats.tasks_run == 2);
}

TEST_CASE("cache values replace their keys, and what only they needed is not run") {
  Graph g = small_graph();
  int z_runs = 0;
  g.task("z", [&](int x) { ++z_runs; return x + 1; }, ref("x"));
  Cache cache;
  cache.emplace("z", Value(40));
  RunStats stats;
  CHECK(get_sync(g, "w", {.cache = cache, .stats = &stats}).as<int>() == 42);
  CHECK(z_runs == 0);
  CHECK(stats.tasks == 1);
  CHECK(get_sync(g, "z", {.cache = cache}).as<int>() == 40);
}

TEST_CASE("Cache: emplace keeps the first value, insert_or_assign replaces it, copies are independent") {
  Cache cache;
  CHECK(cache.empty());
  CHECK(cache.find("z") == nullptr);
  CHECK(cache.emplace("z", Value(40)));
  CHECK_FALSE(cache.emplace("z", Value(41)));
  CHECK(cache.find("z")->as<int>() == 40);
  cache.insert_or_assign(Key("y", {0, 1}), Value(7));
  cache.insert_or_assign(Key("y", {0, 1}), Value(8));
  CHECK(cache.size() == 2);
  Cache copy = cache;
  CHECK(copy.erase("z"));
  CHECK_FALSE(copy.erase("z"));
  CHECK(cache.contains("z"));
  CHECK_FALSE(copy.contains("z"));
  int sum = 0;
  cache.for_each([&](const Key&, const Value& v) { sum += v.as<int>(); });
  CHECK(sum == 48);
  Cache moved = std::move(copy);
  CHECK(moved.find(Key("y", {0, 1}))->as<int>() == 8);
}

TEST_CASE("a task's exception becomes a TaskError with key, function, message and the original nested") {
  Graph g = small_graph();
  g.task("bad", boom, ref("z"));
  g.task("after", inc, ref("bad"));
  REQUIRE_THROWS_WITH_AS(get_sync(g, "after"), "task bad (boom) failed: kaboom", TaskError);
  try {
    get_sync(g, "after");
  } catch (const TaskError& e) {
    CHECK(e.key() == Key("bad"));
    CHECK(e.function() == "boom");
    CHECK(e.message() == "kaboom");
    CHECK_THROWS_WITH_AS(std::rethrow_if_nested(e), "kaboom", std::runtime_error);
    CHECK_THROWS_WITH_AS(e.rethrow_original(), "kaboom", std::runtime_error);
  }
}

TEST_CASE("a TaskError names a function given by TESSERA_FN, however the program was linked") {
  // A lambda has no symbol to look up: only the name given with it reaches the message.
  auto checked_add = [](int a, int b) {
    if (b < 0) throw std::invalid_argument("b is negative");
    return a + b;
  };
  Graph g;
  g.put("x", 1);
  g.task("w", fn("add", checked_add), ref("x"), -1);
  REQUIRE_THROWS_WITH_AS(get_sync(g, "w"), "task w (add) failed: b is negative", TaskError);
}

TEST_CASE("an argument of the wrong type is a TypeError naming the key") {
  Graph g;
  g.put("s", std::string("text"));
  g.task("w", add, ref("s"), 1);
  REQUIRE_THROWS_WITH_AS(get_sync(g, "w"),
                         "task w (add): argument 0: expected a value of type int, found std::string", TypeError);
}

TEST_CASE("a requested key that is not in the graph is a MissingKeyError") {
  Graph g = small_graph();
  REQUIRE_THROWS_WITH_AS(get_sync(g, {"w", "nope"}),
                         "missing key nope: it was requested, but the graph has no such key", MissingKeyError);
}

TEST_CASE("tasks that wait on each other are a CycleError") {
  //  a -> b -> a   (a reads b, b reads a), and w reads a
  Graph g;
  g.task("a", inc, ref("b"));
  g.task("b", inc, ref("a"));
  g.task("w", inc, ref("a"));
  REQUIRE_THROWS_AS(get_sync(g, "w"), CycleError);
  try {
    get_sync(g, "w");
  } catch (const CycleError& e) {
    REQUIRE(e.cycle().size() == 3);
    CHECK(e.cycle().front() == e.cycle().back());
  }
  Graph h;
  h.alias("r", "s");
  h.alias("s", "r");
  REQUIRE_THROWS_WITH_AS(get_sync(h, "r"), "cycle in graph: r -> s -> r", CycleError);
}

TEST_CASE("a negative worker count is refused") {
  Graph g = small_graph();
  REQUIRE_THROWS_WITH_AS(get(g, "w", {.num_workers = -2}),
                         "num_workers must be 0 (all hardware threads) or more, found -2", Error);
}

TEST_CASE("rerun_exceptions_locally runs the failed task again before throwing") {
  Graph g = small_graph();
  int runs = 0;
  g.task("bad", [&](int) -> int {
    ++runs;
    throw std::runtime_error("run " + std::to_string(runs));
  }, ref("z"));
  REQUIRE_THROWS_WITH_AS(get_sync(g, "bad", {.rerun_exceptions_locally = true}), "task bad (lambda) failed: run 2",
                         TaskError);
  CHECK(runs == 2);
  runs = 0;
  REQUIRE_THROWS_AS(get_sync(g, "bad"), TaskError);
  CHECK(runs == 1);
}

TEST_CASE("a cancelled token stops the run and raises Cancelled") {
  //  c0 -> c1 -> c2 -> c3 -> c4, c2 cancels
  Graph g;
  CancellationToken token;
  g.put("c", 0);
  for (int i = 0; i < 5; ++i) {
    Key prev = i == 0 ? Key("c") : Key("c", {i - 1});
    g.task(Key("c", {i}), [i, token](int x) {
      if (i == 2) token.cancel();
      return x + 1;
    }, ref(prev));
  }
  REQUIRE_THROWS_WITH_AS(get_sync(g, Key("c", {4}), {.cancel = token}), "run cancelled: 3 of 5 tasks had finished",
                         Cancelled);
  CancellationToken already;
  already.cancel();
  REQUIRE_THROWS_AS(get_sync(small_graph(), "w", {.cancel = already}), Cancelled);
}

TEST_CASE("a result is released the moment its last reader has run, unless requested") {
  //   a     literal 5
  //  / \    b = f(a), c = f(a), d = f(b, c); request d and b
  // b   c
  //  \ /
  //   d
  std::vector<int> destroyed(4, 0);
  Counted::destroyed = &destroyed;
  Graph g;
  g.put("five", 5);
  auto f = [](int64_t id) {
    return fn("f", [id](std::span<const Value> in) -> Value {
      uint64_t s = 0;
      for (const Value& v : in) s += testing::payload(v);
      return Value::make<Counted>(id, s + 1);
    });
  };
  g.put("a", Task(f(0), ref("five")));
  g.put("b", Task(f(1), ref("a")));
  g.put("c", Task(f(2), ref("a")));
  g.put("d", Task(f(3), ref("b"), ref("c")));
  Plan plan(g, {"d", "b"});
  std::vector<std::string> log;
  Callbacks watch;
  watch.posttask = [&](const RunState& s, uint32_t t, const Value&, int) {
    log.push_back(s.key(t).str() + " a" + std::to_string(destroyed[0]) + " b" + std::to_string(destroyed[1]) +
                  " c" + std::to_string(destroyed[2]) + " held " + std::to_string(s.held_count()));
  };
  {
    Result r = get_sync(plan, {.callbacks = {watch}});
    CHECK(r[0].as<Counted>().v == 15);
    CHECK(destroyed == std::vector<int>{1, 0, 1, 0});  // b and d requested: kept
  }
  CHECK(destroyed == std::vector<int>{1, 1, 1, 1});
  CHECK(Counted::alive == 0);
  Counted::destroyed = nullptr;
  REQUIRE(log.size() == 4);
  CHECK(log[0] == "a a0 b0 c0 held 1");
  // a goes when the second of b, c has run; the order between them is order()'s.
  CHECK(log[2].find(" a1 ") != std::string::npos);
  CHECK(log[1].find(" a0 ") != std::string::npos);
  CHECK(log[3] == "d a1 b0 c1 held 2");
}

namespace {

// dask's get_sync, written out plainly over a Plan: pop the top of the stack,
// run it, push the dependents it made ready sorted so the best priority is on
// top; count held results after the released inputs are dropped.
struct Reference {
  std::vector<uint32_t> sequence;
  size_t peak = 0;
};

Reference dask_sync_order(const Plan& p) {
  Reference ref;
  const uint32_t nt = p.num_tasks();
  std::vector<uint32_t> waiting(nt), uses(p.size());
  for (uint32_t u = 0; u < nt; ++u) waiting[u] = p.num_waiting(u);
  for (uint32_t u = 0; u < p.size(); ++u) uses[u] = static_cast<uint32_t>(p.dependents(u).size());
  std::vector<uint32_t> stack = p.initial_ready();
  size_t held = 0;
  while (!stack.empty()) {
    uint32_t t = stack.back();
    stack.pop_back();
    ref.sequence.push_back(t);
    std::vector<uint32_t> ready;
    for (uint32_t s : p.dependents(t)) {
      if (--waiting[s] == 0) ready.push_back(s);
    }
    std::sort(ready.begin(), ready.end(), [&](uint32_t a, uint32_t b) { return p.priority(a) > p.priority(b); });
    stack.insert(stack.end(), ready.begin(), ready.end());
    ++held;
    for (uint32_t d : p.dependencies(t)) {
      if (--uses[d] == 0 && d < nt && !p.is_requested(d)) --held;
    }
    ref.peak = std::max(ref.peak, held);
  }
  return ref;
}

}  // namespace

TEST_CASE("get_sync pops tasks in dask's LIFO order and holds what dask's get_sync holds") {
  for (uint32_t seed : {1u, 2u, 3u}) {
    testing::RandomDag d = testing::random_dag(seed, 600, 0.0);
    Plan plan(d.graph, d.request);
    Reference expected = dask_sync_order(plan);
    std::vector<uint32_t> seen;
    Callbacks record;
    record.pretask = [&](const RunState&, uint32_t t, int worker) {
      CHECK(worker == 0);
      seen.push_back(t);
    };
    RunStats stats;
    get_sync(plan, {.callbacks = {record}, .stats = &stats});
    CHECK(seen == expected.sequence);
    CHECK(stats.peak_held == expected.peak);
    // The same with one worker of get, and without callbacks (another code path).
    RunStats plain;
    get(plan, {.num_workers = 1, .stats = &plain});
    CHECK(plain.peak_held == expected.peak);
  }
  CHECK(Counted::alive == 0);
}

//   x   y
//   |   |
//   z   |
//    \ /
//     w      result -> w (alias)
TEST_CASE("a Plan from a compiled and ordered graph runs in the given priorities") {
  Graph g = small_graph();
  g.alias("result", "w");
  const CompiledGraph c = compile(g);
  // Priorities that run z before anything else can only come from the caller.
  std::vector<uint32_t> prio(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) prio[i] = static_cast<uint32_t>(g.size() - 1 - i);
  Plan plan(g, c, prio, Key("result"));
  CHECK(get_sync(plan).as<int>() == 4);
  REQUIRE(plan.num_tasks() == 2);
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) CHECK(plan.priority(t) == prio[plan.graph_id(t)]);
  const Plan ordered(g, c, order(g, c), {"result"});
  const Plan fresh(g, {"result"});
  for (uint32_t t = 0; t < fresh.num_tasks(); ++t) CHECK(ordered.priority(t) == fresh.priority(t));
}

TEST_CASE("a Plan refuses a compiled form or priorities of another graph") {
  Graph g = small_graph();
  Graph other = small_graph();
  other.put("extra", 0);
  const CompiledGraph c = compile(other);
  const std::vector<uint32_t> prio = order(other, c);
  REQUIRE_THROWS_WITH_AS(Plan(g, c, prio, {"w"}),
                         "Plan: expected a compiled form and priorities of the graph's 4 nodes, found 5 compiled "
                         "nodes and 5 priorities",
                         ValueError);
}

namespace {

int64_t one() { return 1; }
int64_t add_all(const std::vector<int64_t>& xs) {
  int64_t s = 0;
  for (int64_t x : xs) s += x;
  return s;
}

// 1000 leaves x0..x999 feeding one sum: 1000 tasks ready at the start.
//   x0  x1  ...  x999
//     \  |   ...  /
//         sum
Graph wide_sum() {
  Graph g;
  std::vector<Arg> parts;
  for (int64_t i = 0; i < 1000; ++i) {
    g.task(Key("x", {i}), one);
    parts.emplace_back(ref(Key("x", {i})));
  }
  g.put("sum", Task::from_args(add_all, {Arg(ArgList{std::move(parts)})}));
  return g;
}

bool best_priority_last(const Plan& p) {
  const auto& ready = p.initial_ready();
  for (size_t i = 1; i < ready.size(); ++i) {
    if (p.priority(ready[i - 1]) < p.priority(ready[i])) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("a Plan's first ready set has the best priority on top, for many roots and for repeated priorities") {
  const Graph g = wide_sum();
  const Plan p(g, Keys(Key("sum")));
  REQUIRE(p.initial_ready().size() == 1000);
  CHECK(best_priority_last(p));
  CHECK(get_sync(p).as<int64_t>() == 1000);
  // Priorities given by the caller may repeat: the stack is still sorted.
  const CompiledGraph c = compile(g);
  std::vector<uint32_t> prio(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) prio[i] = (i * 7919) % 100;
  const Plan q(g, c, prio, Keys(Key("sum")));
  REQUIRE(q.initial_ready().size() == 1000);
  CHECK(best_priority_last(q));
  CHECK(get_sync(q).as<int64_t>() == 1000);
  // Sparse priorities (far above the number of ready tasks) too.
  for (uint32_t i = 0; i < g.size(); ++i) prio[i] = (g.size() - i) * 100000;
  const Plan r(g, c, prio, Keys(Key("sum")));
  CHECK(best_priority_last(r));
  CHECK(r.key(r.initial_ready().back()) == Key("x", {999}));
}
