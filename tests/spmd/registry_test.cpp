#include <doctest/doctest.h>

#include <string>

#include "tessera/graph/error.hpp"
#include "tessera/spmd/registry.hpp"

namespace spmd = tessera::spmd;

namespace {

int registered_twice(int x) { return x + 1; }
TESSERA_SPMD_REGISTER(registered_twice);
TESSERA_SPMD_REGISTER(registered_twice);  // the same function again: harmless

int other(int x) { return x; }
int unregistered(int x) { return x; }

inline constexpr auto cube = [](int x) { return x * x * x; };
TESSERA_SPMD_REGISTER(cube);

}  // namespace

TEST_CASE("registry: a function is found by its address, a lambda by its type, and both by name") {
  REQUIRE(spmd::registered_name(registered_twice) != nullptr);
  CHECK(*spmd::registered_name(registered_twice) == "registered_twice");
  CHECK(*spmd::registered_name(&registered_twice) == "registered_twice");
  CHECK(*spmd::registered_name(tessera::fn("shown", registered_twice)) == "registered_twice");
  REQUIRE(spmd::registered_name(cube) != nullptr);
  CHECK(*spmd::registered_name(cube) == "cube");
  CHECK(spmd::registered_name(unregistered) == nullptr);
  CHECK(spmd::registered_name([](int x) { return x; }) == nullptr);

  tessera::RawFn f = spmd::detail::registered_factory("registered_twice")(1);
  tessera::Value arg(41);
  CHECK(f(std::span(&arg, 1)).as<int>() == 42);
  CHECK(spmd::detail::registered_factory("cube")(1)(std::span(&arg, 1)).as<int>() == 41 * 41 * 41);
}

TEST_CASE("registry: errors say which name and what to do") {
  CHECK_THROWS_WITH_AS(spmd::register_function("registered_twice", other),
                       "spmd::register_function: the name 'registered_twice' is registered already for another "
                       "function; give each function its own name",
                       tessera::Error);
  CHECK_THROWS_WITH_AS(spmd::detail::registered_factory("nowhere"),
                       "no SPMD function is registered under the name 'nowhere' in this process; register it with "
                       "TESSERA_SPMD_REGISTER at namespace scope in code linked into every rank",
                       tessera::Error);
  CHECK_THROWS_WITH_AS(spmd::detail::registered_factory("registered_twice")(2),
                       "task function takes 1 argument(s), but 2 were given", tessera::TypeError);
}
