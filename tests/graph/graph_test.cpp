#include <doctest/doctest.h>

#include <string>
#include <unordered_set>
#include <vector>

#include <absl/hash/hash.h>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;

// Not static: the test executable exports its symbols, so a task names them.
int inc(int x) { return x + 1; }
int add(int a, int b) { return a + b; }

TEST_CASE("keys print as dask prints them") {
  CHECK(Key("x").str() == "x");
  CHECK(Key("x", {0, 1}).str() == "('x', 0, 1)");
  CHECK(Key("x", {}).str() == "('x',)");
  CHECK(Key("x", {0, 1}).json() == "[\"x\", 0, 1]");
}

TEST_CASE("keys are equal by name and index, and hash alike") {
  CHECK(Key("x", {1}) == Key(std::string("x"), {1}));
  CHECK(Key("x", {1}) != Key("x", {2}));
  CHECK(Key("x") != Key("x", {}));
  CHECK(absl::HashOf(Key("a", {3})) == absl::HashOf(Key("a", {3})));
}

// Up to three indices live inside the Key, more on the heap: both kinds copy,
// move, compare and hash alike, and work in the standard library's hash sets.
TEST_CASE("keys of 0 to 6 indices copy, move and hash, inline or on the heap") {
  std::unordered_set<Key> seen;
  for (int64_t n = 0; n <= 6; ++n) {
    std::vector<int64_t> index(static_cast<size_t>(n));
    for (int64_t i = 0; i < n; ++i) index[static_cast<size_t>(i)] = 10 * i + n;
    const Key k("k", index);
    Key copy = k;
    CHECK(copy == k);
    CHECK(std::vector<int64_t>(copy.index().begin(), copy.index().end()) == index);
    Key moved = std::move(copy);
    CHECK(moved == k);
    Key assigned("other", {1, 2, 3, 4, 5});
    assigned = moved;
    CHECK(assigned == k);
    assigned = Key("short");
    CHECK(assigned.index().empty());
    CHECK(std::hash<Key>{}(moved) == std::hash<Key>{}(k));
    CHECK(seen.insert(k).second);
    CHECK_FALSE(seen.insert(moved).second);
  }
  CHECK(seen.size() == 7);
  CHECK(Key("k", {1, 2, 3, 4}) != Key("k", {1, 2, 3, 5}));
  CHECK(Key("k", {1, 2, 3}) != Key("k", {1, 2, 3, 4}));
}

TEST_CASE("a key's name is held while a key with it lives, and released after the last") {
  const size_t base = detail::interned_name_count();
  {
    Key a("a-name-no-other-test-uses", {0});
    CHECK(detail::interned_name_count() == base + 1);
    Key b = a;                                  // a copy shares the name
    Key c("a-name-no-other-test-uses", {1});    // so does a key made from the text
    CHECK(detail::interned_name_count() == base + 1);
    Key moved = std::move(b);
    CHECK(moved == a);
    CHECK(b.name().empty());                    // NOLINT(bugprone-use-after-move): a moved-from key is empty
    b = c;
    CHECK(b == c);
  }
  CHECK(detail::interned_name_count() == base);
}

TEST_CASE("a name pinned for task functions outlives the keys that share it") {
  const size_t base = detail::interned_name_count();
  const std::string* pinned = detail::intern("a-pinned-name-no-other-test-uses");
  { Key k("a-pinned-name-no-other-test-uses"); CHECK(k.name().data() == pinned->data()); }
  CHECK(detail::interned_name_count() == base + 1);
  CHECK(*pinned == "a-pinned-name-no-other-test-uses");
}

TEST_CASE("keys sort like dask's sortkey") {
  CHECK(Key("a") < Key("b"));
  CHECK(Key("x", {0, 2}) < Key("x", {0, 10}));  // numerically, not as text
  CHECK(Key("x", {0}) < Key("x", {0, 0}));
  CHECK(Key("y", {0}) > Key("x", {5}));
  // a string against a tuple compares their printed forms: "('x', 0)" < "x"
  CHECK(Key("x", {0}) < Key("x"));
}

TEST_CASE("a typed task deduces parameters and reports its dependencies") {
  Graph g;
  g.put("x", 1);
  g.put("y", 2);
  g.task("z", inc, ref("x"));
  g.task("w", add, ref("z"), ref("y"));
  REQUIRE(g.size() == 4);
  const Task& w = g.at("w").task();
  CHECK(w.function_name() == "add");
  REQUIRE(w.dependencies().size() == 2);
  CHECK(w.dependencies()[0] == Key("z"));
  Value z = 5, y = 2;
  const Value* deps[] = {&z, &y};
  CHECK(w.run([&](size_t i) -> const Value& { return *deps[i]; }).as<int>() == 7);
}

TEST_CASE("nested tasks and lists share the owner's dependency numbering") {
  // w = sum([x, inc(y), x])
  auto sum = [](const std::vector<int>& xs) {
    int s = 0;
    for (int x : xs) s += x;
    return s;
  };
  Task t(fn("sum", sum), list(ref("x"), Task(inc, ref("y")), ref("x")));
  REQUIRE(t.dependencies().size() == 2);
  Value x = 10, y = 1;
  CHECK(t.run([&](size_t i) -> const Value& { return i == 0 ? x : y; }).as<int>() == 22);
}

TEST_CASE("a wrong argument type is a TypeError naming both types") {
  Task t(inc, ref("x"));
  Value s = std::string("text");
  REQUIRE_THROWS_WITH_AS(t.run([&](size_t) -> const Value& { return s; }),
                         doctest::Contains("expected a value of type int, found std::string"),
                         TypeError);
}

TEST_CASE("Value::as names the expected and the actual type") {
  Value v = 3.5;
  CHECK(v.as<double>() == 3.5);
  REQUIRE_THROWS_WITH_AS(v.as<int>(), "expected a value of type int, found double", TypeError);
  CHECK(Value(std::vector<double>(100)).nbytes() == sizeof(std::vector<double>) + 800);
}

TEST_CASE("compile numbers nodes and finds dependents") {
  Graph g;
  g.put("x", 1);
  g.task("y", inc, ref("x"));
  g.task("z", add, ref("x"), ref("y"));
  g.alias("a", "z");
  CompiledGraph c = compile(g);
  REQUIRE(c.size() == 4);
  CHECK(c.dependents(0).size() == 2);
  CHECK(c.dependencies(2).size() == 2);
  CHECK(c.dependencies(3)[0] == 2);
}

TEST_CASE("compile names the task that refers to a missing key") {
  Graph g;
  g.task("y", inc, ref("nope"));
  REQUIRE_THROWS_WITH_AS(compile(g),
                         "missing key nope: task y depends on it, but the graph has no such key",
                         MissingKeyError);
}

// t0 = inc(1); t(k+1) = inc(t(k)) as a nested task, `depth` levels.
Task nested_inc(int depth) {
  Task t(inc, 1);
  for (int i = 1; i < depth; ++i) t = Task(inc, std::move(t));
  return t;
}

TEST_CASE("nested tasks run up to kMaxArgNesting levels; deeper ones are refused when built") {
  Graph g;
  g.put("deep", nested_inc(static_cast<int>(kMaxArgNesting)));
  CHECK(g.node(0).task().depth() == kMaxArgNesting);
  CHECK(get_sync(g, "deep").as<int>() == 1 + static_cast<int>(kMaxArgNesting));
  Task t = nested_inc(static_cast<int>(kMaxArgNesting));
  CHECK_THROWS_WITH_AS(Task(inc, std::move(t)),
                       "a task's arguments nests tasks and lists more than 1000 levels deep; tessera refuses deeper "
                       "arguments (put the inner levels in tasks of their own, referred to by key)",
                       Error);
  // A hostile builder that keeps going gets the error, never a stack overflow.
  auto hostile = [] {
    Task u(inc, 1);
    for (int i = 1; i < 100000; ++i) u = Task(inc, std::move(u));
  };
  CHECK_THROWS_AS(hostile(), Error);
}

int count_lists(const std::vector<Value>& items) { return static_cast<int>(items.size()); }

TEST_CASE("nested argument lists 100,000 deep are refused at the first level past the limit") {
  Arg a = list(ref("x"));
  uint32_t built = 1;
  try {
    for (int i = 1; i < 100000; ++i, ++built) {
      Arg next = list(a);  // a copy shares the inner lists; `a` stays whole when this throws
      a = std::move(next);
    }
    FAIL("a 100,000-deep list was built");
  } catch (const Error& e) {
    CHECK(std::string(e.what()).find("an argument list nests tasks and lists more than 1000 levels deep") == 0);
  }
  CHECK(built == kMaxArgNesting);
  CHECK_THROWS_AS(Task(count_lists, a), Error);  // the task is one level more
  Arg b = list(ref("x"));
  for (uint32_t i = 2; i < kMaxArgNesting; ++i) b = list(std::move(b));
  Graph g;
  g.put("x", 1);
  g.put("l", Task(count_lists, std::move(b)));  // 1,000 levels: runs and is destroyed
  CHECK(get_sync(g, "l").as<int>() == 1);
}

TEST_CASE("a task with 100,000 dependencies lists each once, in order of first appearance") {
  std::vector<Arg> args;
  for (int64_t i = 0; i < 100000; ++i) args.emplace_back(ref("x", {i % 50000}));
  const Task t = Task::from_args(fn("n", [](std::span<const Value> v) { return static_cast<int64_t>(v.size()); }),
                                 std::move(args));
  REQUIRE(t.dependencies().size() == 50000);
  CHECK(t.dependencies()[49999] == Key("x", {49999}));
}

TEST_CASE("messages quote a huge key by a short prefix") {
  const Key huge(std::string(200000, '('));
  CHECK(huge.brief() == std::string(120, '(') + "... (200000 characters)");
  Graph g;
  g.task("t", inc, ref(huge));
  try {
    (void)get_sync(g, "t");
    FAIL("a missing key ran");
  } catch (const MissingKeyError& e) {
    CHECK(std::string(e.what()).size() < 400);
  }
}
