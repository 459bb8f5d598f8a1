#include <doctest/doctest.h>

#include "evaluate.hpp"
#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/optimize/fuse.hpp"

using namespace tessera;
using testing::evaluate;

// Functions are named with fn(): these are local to this file.
namespace {
int inc(int x) { return x + 1; }
int twice(int x) { return 2 * x; }
int add(int a, int b) { return a + b; }
int neg(int x) { return -x; }

//   x -> a -> b -> c      (c = twice(inc(inc(x))), x = 5)
Graph chain() {
  Graph g;
  g.put("x", 5);
  g.task("a", fn("inc", inc), ref("x"));
  g.task("b", fn("inc", inc), ref("a"));
  g.task("c", fn("twice", twice), ref("b"));
  return g;
}
}  // namespace

TEST_CASE("fuse makes a linear chain one task computing the same value") {
  const Graph g = chain();
  Graph f = fuse(g, {"c"});
  CHECK(f.keys() == std::vector<Key>{"x", "c"});
  CHECK(f.at("c").task().function_name() == "inc+inc+twice");
  CHECK(f.at("c").task().dependencies() == std::vector<Key>{"x"});
  CHECK(evaluate(f, "c").as<int>() == evaluate(g, "c").as<int>());
}

//   x -> a -> b -> c   with b kept: a fuses into b; b and c stay apart
TEST_CASE("fuse_targets and fuse_chain say what fuse merges, on the compiled ids") {
  const Graph g = chain();
  const CompiledGraph c = compile(g);
  const uint32_t n = c.size();
  CHECK(fuse_targets(g, c, {}) == std::vector<uint32_t>{n, 2, 3, n});  // x is a literal
  CHECK(fuse_chain(c, fuse_targets(g, c, {}), 3) == std::vector<uint32_t>{1, 2, 3});
  const std::vector<Key> keep{"b"};
  const std::vector<uint32_t> into = fuse_targets(g, c, keep);
  CHECK(into == std::vector<uint32_t>{n, 2, n, n});
  CHECK(fuse_chain(c, into, 2) == std::vector<uint32_t>{1, 2});
  CHECK(fuse_chain(c, into, 3) == std::vector<uint32_t>{3});
}

//   x -> a -> b -> c   with b requested: a+b fused, c stays (reads b)
TEST_CASE("fuse keeps requested keys resolvable") {
  Graph g;
  g.put("x", 1);
  g.task("a", fn("inc", inc), ref("x"));
  g.task("b", fn("twice", twice), ref("a"));
  g.task("c", fn("neg", neg), ref("b"));
  Graph f = fuse(g, {"b", "c"});
  CHECK(f.keys() == std::vector<Key>{"x", "b", "c"});
  CHECK(evaluate(f, "b").as<int>() == 4);
  CHECK(evaluate(f, "c").as<int>() == -4);
}

//     x
//     |
//     a        a has two readers: the chain stops at it.
//    / \       b and c each have one reader, d, but d reads two keys:
//   b   c      not a linear chain, nothing is fused below a either.
//    \ /
//     d
TEST_CASE("fuse leaves splits and joins alone") {
  Graph g;
  g.put("x", 3);
  g.task("a", fn("inc", inc), ref("x"));
  g.task("b", fn("twice", twice), ref("a"));
  g.task("c", fn("neg", neg), ref("a"));
  g.task("d", fn("add", add), ref("b"), ref("c"));
  Graph f = fuse(g, {"d"});
  CHECK(f.keys() == g.keys());
  CHECK(evaluate(f, "d").as<int>() == evaluate(g, "d").as<int>());
  CHECK_NOTHROW(compile(f));
}

//   x -> t=neg(x) -> y=inc(t) ; z=add(t, y)      neg is "fast"
TEST_CASE("inline_functions computes fast tasks inside their readers") {
  Graph g;
  g.put("x", 10);
  g.task("t", fn("neg", neg), ref("x"));
  g.task("y", fn("inc", inc), ref("t"));
  g.task("z", fn("add", add), ref("t"), ref("y"));
  Graph f = inline_functions(g, {"z"}, {"neg"});
  CHECK(!f.contains("t"));
  CHECK(f.at("y").task().dependencies() == std::vector<Key>{"x"});
  CHECK(f.at("z").task().function_name() == "add");
  CHECK(evaluate(f, "z").as<int>() == -19);
  CHECK(evaluate(f, "y").as<int>() == -9);
}

TEST_CASE("inline_functions keeps outputs and tasks nobody reads") {
  Graph g;
  g.put("x", 1);
  g.task("t", fn("neg", neg), ref("x"));
  g.task("u", fn("neg", neg), ref("x"));
  g.task("y", fn("inc", inc), ref("t"));
  Graph f = inline_functions(g, {"t", "y"}, {"neg"});
  CHECK(f.contains("t"));
  CHECK(f.contains("u"));
  CHECK(evaluate(f, "y").as<int>() == 0);
}

TEST_CASE("fuse and inline_functions refuse a cycle") {
  Graph g;
  g.task("a", fn("inc", inc), ref("b"));
  g.task("b", fn("inc", inc), ref("a"));
  REQUIRE_THROWS_WITH_AS(fuse(g, {}), "cycle in graph: a -> b -> a", CycleError);
  REQUIRE_THROWS_WITH_AS(inline_functions(g, {}, {"inc"}), "cycle in graph: a -> b -> a", CycleError);
}
