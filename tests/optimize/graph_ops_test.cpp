#include <doctest/doctest.h>

#include <algorithm>

#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"

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

TEST_CASE("cull refuses an absent key and names a task's missing dependency") {
  Graph g = small_graph();
  REQUIRE_THROWS_WITH_AS(cull(g, {"v"}), "missing key v: it was requested, but the graph has no such key",
                         MissingKeyError);
  g.task("bad", inc, ref("ghost"));
  REQUIRE_THROWS_WITH_AS(cull(g, {"bad"}),
                         "missing key ghost: task bad depends on it, but the graph has no such key", MissingKeyError);
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
