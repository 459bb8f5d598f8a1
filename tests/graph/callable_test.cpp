// Calling and naming callables (tessera/graph/callable.hpp), shared by Task and spmd.
#include <doctest/doctest.h>

#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/graph/callable.hpp"
#include "tessera/graph/graph.hpp"

// A named namespace: scripts/test compiles a suite as one file, where another
// test file's helpers of the same name would clash.
namespace callable_test {

using namespace tessera;

namespace {

// Internal linkage: no symbol table names these, with or without -rdynamic, so
// only a name given with the function can reach a message.
int add(int a, int b) { return a + b; }
int scale(int x, int by) { return x * by; }

}  // namespace

TEST_CASE("fn and TESSERA_FN name a function without symbol lookup") {
  Graph g;
  g.put("x", 1);
  g.task("a", fn("plus", add), ref("x"), 2);
  g.task("b", TESSERA_FN(scale), ref("x"), 3);
  CHECK(g.at("a").task().function_name() == "plus");
  CHECK(g.at("b").task().function_name() == "scale");
  CHECK(*callable_name(TESSERA_FN(add)) == "add");
}

TEST_CASE("a lambda is named lambda unless given a name") {
  auto twice = [](int x) { return 2 * x; };
  CHECK(*callable_name(twice) == "lambda");
  CHECK(Task(fn("twice", twice), 4).function_name() == "twice");
}

TEST_CASE("make_raw_fn converts each Value to its parameter's type") {
  RawFn raw = make_raw_fn(add, 2);
  const std::vector<Value> args = {Value(3), Value(4)};
  CHECK(raw(args).as<int>() == 7);
  // A std::vector parameter takes a list element by element.
  RawFn total = make_raw_fn([](const std::vector<int>& xs) { return xs.size(); }, 1);
  const std::vector<Value> list = {Value(ValueList{Value(1), Value(2)})};
  CHECK(total(list).as<size_t>() == 2);
}

TEST_CASE("a function of one Value takes that argument, not the argument list") {
  // A Value can hold any object, a span of arguments too: only a function whose
  // parameter is the span itself takes the whole list.
  RawFn first = make_raw_fn([](Value v) { return v.as<int>() + 1; }, 1);
  const std::vector<Value> args = {Value(41)};
  CHECK(first(args).as<int>() == 42);
  REQUIRE_THROWS_WITH_AS(make_raw_fn([](const Value& v) { return v; }, 2),
                         "task function takes 1 argument(s), but 2 were given", TypeError);
  CHECK(std::is_same_v<call_result_t<decltype(+[](Value v) { return v.as<int>(); })>, int>);
  // A generic lambda has no one signature: it is offered the argument list.
  RawFn count = make_raw_fn([](auto args) { return static_cast<int>(args.size()); }, 3);
  const std::vector<Value> three = {Value(1), Value(2), Value(3)};
  CHECK(count(three).as<int>() == 3);
}

TEST_CASE("make_raw_fn reports a wrong argument count and a wrong argument type") {
  REQUIRE_THROWS_WITH_AS(make_raw_fn(add, 3), "task function takes 2 argument(s), but 3 were given", TypeError);
  RawFn raw = make_raw_fn(add, 2);
  const std::vector<Value> args = {Value(3), Value(std::string("four"))};
  REQUIRE_THROWS_WITH_AS(raw(args), "argument 1: expected a value of type int, found std::string",
                         ArgumentTypeError);
}

TEST_CASE("call_result_t is what the function returns, also through fn") {
  CHECK(std::is_same_v<call_result_t<decltype(&add)>, int>);
  CHECK(std::is_same_v<call_result_t<NamedFn<decltype(&add)>>, int>);
  auto untyped = [](std::span<const Value> v) { return static_cast<double>(v.size()); };
  CHECK(std::is_same_v<call_result_t<decltype(untyped)>, double>);
}

}  // namespace callable_test
