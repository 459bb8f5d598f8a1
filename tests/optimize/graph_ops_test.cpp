#include <doctest/doctest.h>

#include <algorithm>

#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"

// A named namespace: scripts/test compiles a suite as one file, where another
// test file's helpers of the same name would clash.
namespace graph_ops_test {

using namespace tessera;

namespace {
int inc(int x) { return x + 1; }
int add(int a, int b) { return a + b; }

//   x   y
//   |   |
//   z   |        u (unrelated)
//    \ /
//     w
Graph small_graph() {
  Graph g;
  g.put("x", 1);
  g.put("y", 2);
  g.task("z", inc, ref("x"));
  g.task("w", add, ref("z"), ref("y"));
  g.task("u", inc, ref("y"));
  return g;
}

// a -> b -> c -> a, plus d reading a
Graph cyclic_graph() {
  Graph g;
  g.task("a", inc, ref("b"));
  g.task("b", inc, ref("c"));
  g.task("c", inc, ref("a"));
  g.task("d", inc, ref("a"));
  return g;
}
}  // namespace

TEST_CASE("dependencies and dependents of a key") {
  Graph g = small_graph();
  CHECK(dependencies(g, "w") == std::vector<Key>{"z", "y"});
  CHECK(dependents(g, "y") == std::vector<Key>{"w", "u"});
  CHECK(dependents(g, "w").empty());
  REQUIRE_THROWS_WITH_AS(dependents(g, "nope"),
                         "missing key nope: it was requested, but the graph has no such key", MissingKeyError);
}

TEST_CASE("cull keeps exactly what the requested keys need, in graph order") {
  Graph g = small_graph();
  Graph c = cull(g, {"w"});
  CHECK(c.keys() == std::vector<Key>{"x", "y", "z", "w"});
  CHECK(cull(g, {"u"}).keys() == std::vector<Key>{"y", "u"});
  CHECK(cull(g, {"w", "u"}).size() == 5);
}

TEST_CASE("cull_one keeps what cull keeps for one key, on a graph compiled once") {
  Graph g = small_graph();
  g.alias("a", "w");
  const CompiledGraph c = compile(g);
  for (const Key& k : std::vector<Key>{"w", "u", "x", "a"}) {
    CAPTURE(k);
    CHECK(cull_one(g, c, *g.index_of(k)).keys() == cull(g, {k}).keys());
  }
}

TEST_CASE("cull refuses an absent key and names a task's missing dependency") {
  Graph g = small_graph();
  REQUIRE_THROWS_WITH_AS(cull(g, {"v"}), "missing key v: it was requested, but the graph has no such key",
                         MissingKeyError);
  g.task("bad", inc, ref("ghost"));
  REQUIRE_THROWS_WITH_AS(cull(g, {"bad"}),
                         "missing key ghost: task bad depends on it, but the graph has no such key", MissingKeyError);
}

//   x   y
//   |   |
//   z   |        u          r2 -> r1 -> w   (aliases)
//    \ /
//     w
TEST_CASE("cull_ids follows aliases to their targets and lists the aliases on the way") {
  Graph g = small_graph();
  g.alias("r1", "w");
  g.alias("r2", "r1");
  const CompiledGraph c = compile(g);
  const uint32_t r2 = *g.index_of("r2"), r1 = *g.index_of("r1"), w = *g.index_of("w");
  const CulledIds culled = cull_ids(g, c, {r2});
  CHECK(culled.roots == std::vector<uint32_t>{w});
  CHECK(culled.aliases == std::vector<uint32_t>{r1, r2});
  std::vector<Key> nodes;
  for (uint32_t i : culled.nodes) nodes.push_back(g.key(i));
  CHECK(nodes == std::vector<Key>{"x", "y", "z", "w"});
  CHECK(culled.target[r2] == w);
  CHECK(culled.target[r1] == w);
  CHECK(culled.target[*g.index_of("u")] == CulledIds::kUnneeded);
}

TEST_CASE("cull_ids stops at known values, even a task or an alias") {
  Graph g = small_graph();
  g.alias("r1", "w");
  const CompiledGraph c = compile(g);
  std::vector<uint8_t> known(g.size(), 0);
  known[*g.index_of("z")] = 1;
  CulledIds culled = cull_ids(g, c, {*g.index_of("w")}, known);
  std::vector<Key> nodes;
  for (uint32_t i : culled.nodes) nodes.push_back(g.key(i));
  CHECK(nodes == std::vector<Key>{"y", "z", "w"});  // not x: z is known
  known.assign(g.size(), 0);
  known[*g.index_of("r1")] = 1;
  culled = cull_ids(g, c, {*g.index_of("r1")}, known);
  CHECK(culled.roots == std::vector<uint32_t>{*g.index_of("r1")});
  CHECK(culled.aliases.empty());
}

TEST_CASE("cull_ids refuses aliases that refer to each other, printing the cycle") {
  Graph g;
  g.alias("p", "q");
  g.alias("q", "r");
  g.alias("r", "q");
  const CompiledGraph c = compile(g);
  REQUIRE_THROWS_WITH_AS(cull_ids(g, c, {0}), "cycle in graph: q -> r -> q", CycleError);
}

TEST_CASE("a chain of 300,000 aliases culls to its end, each alias resolved once") {
  Graph g;
  const uint32_t n = 300000;
  g.put(Key("a", {0}), 1);
  for (int64_t i = 1; i <= n; ++i) g.alias(Key("a", {i}), Key("a", {i - 1}));
  const CompiledGraph c = compile(g);
  // Every alias of the chain requested: a lookup per alias must not walk the rest of the chain.
  std::vector<uint32_t> roots(n);
  for (uint32_t i = 0; i < n; ++i) roots[i] = n - i;
  const CulledIds culled = cull_ids(g, c, roots);
  CHECK(culled.nodes == std::vector<uint32_t>{0});
  CHECK(culled.aliases.size() == n);
  CHECK(std::all_of(culled.roots.begin(), culled.roots.end(), [](uint32_t r) { return r == 0; }));
  CHECK(cull(g, {Key("a", {int64_t{n}})}).size() == n + 1);
}

TEST_CASE("toposort puts every key after its dependencies") {
  Graph g = small_graph();
  std::vector<Key> keys = toposort(g);
  REQUIRE(keys.size() == g.size());
  auto pos = [&](const Key& k) { return std::find(keys.begin(), keys.end(), k) - keys.begin(); };
  for (const Key& k : keys) {
    for (const Key& d : dependencies(g, k)) CHECK(pos(d) < pos(k));
  }
}

TEST_CASE("a cycle is found and printed along its edges") {
  Graph g = cyclic_graph();
  CHECK(find_cycle(g) == std::vector<Key>{"a", "b", "c", "a"});
  CHECK(find_cycle(small_graph()).empty());
  REQUIRE_THROWS_WITH_AS(toposort(g), "cycle in graph: a -> b -> c -> a", CycleError);
  Graph self;
  self.task("s", inc, ref("s"));
  REQUIRE_THROWS_WITH_AS(toposort(self), "cycle in graph: s -> s", CycleError);
}

TEST_CASE("a missing dependency is named with the task that refers to it") {
  Graph g = small_graph();
  g.task("v", add, ref("w"), ref("q"));
  REQUIRE_THROWS_WITH_AS(toposort(g), "missing key q: task v depends on it, but the graph has no such key",
                         MissingKeyError);
}

}  // namespace graph_ops_test
