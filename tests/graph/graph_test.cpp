#include <doctest/doctest.h>

#include <string>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/graph.hpp"

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
