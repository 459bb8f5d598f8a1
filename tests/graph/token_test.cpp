// token and unique_token: the names that array operations, delayed calls and
// scratch-folder owners are given (graph/token.hpp).
#include <doctest/doctest.h>

#include <set>
#include <string>

#include "tessera/array/array.hpp"
#include "tessera/graph/token.hpp"

TEST_CASE("token: the same parts give the same 16 hex digits; other parts, another") {
  const std::string a = tessera::token({"sum", "x-3f2a", "axis=0"});
  CHECK(a.size() == 16);
  CHECK(a.find_first_not_of("0123456789abcdef") == std::string::npos);
  CHECK(a == tessera::token({"sum", "x-3f2a", "axis=0"}));
  CHECK(a != tessera::token({"sum", "x-3f2a", "axis=1"}));
  // The parts are kept apart: moving a character across a boundary changes the token.
  CHECK(tessera::token({"ab", "c"}) != tessera::token({"a", "bc"}));
  CHECK(tessera::token({}) != tessera::token({""}));
}

TEST_CASE("unique_token: never the same twice; seed_unique_tokens replays the sequence") {
  std::set<std::string> seen;
  for (int i = 0; i < 100; ++i) seen.insert(tessera::unique_token());
  CHECK(seen.size() == 100);
  tessera::seed_unique_tokens(42);
  const std::string first = tessera::unique_token(), second = tessera::unique_token();
  tessera::seed_unique_tokens(42);
  CHECK(tessera::unique_token() == first);
  CHECK(tessera::unique_token() == second);
}

TEST_CASE("tessera::array::token is the same function, for code written against array.hpp") {
  CHECK(tessera::array::token({"sum", "x"}) == tessera::token({"sum", "x"}));
}
