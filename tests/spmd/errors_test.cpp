#include <doctest/doctest.h>

#include <stdexcept>
#include <string>

#include "tessera/spmd/spmd.hpp"

using namespace tessera;
using namespace tessera::spmd;

// Not static: the test executable exports its symbols, so messages name it.
int square(int x) { return x * x; }

namespace {

// Fails on the engines whose rank is listed in `failing`.
std::vector<int> run_failing(int engines, std::vector<int> failing) {
  Cluster cluster(engines);
  return cluster.broadcast_view()
      .apply(
          [](const std::vector<int>& failing) {
            int rank = context().rank();
            for (int f : failing) {
              if (f == rank) throw std::runtime_error("boom " + std::to_string(rank));
            }
            return rank;
          },
          failing)
      .get();
}

CompositeError composite_of(int engines, std::vector<int> failing) {
  try {
    run_failing(engines, std::move(failing));
  } catch (const CompositeError& e) {
    return e;
  }
  FAIL("no CompositeError was raised");
  throw std::logic_error("unreachable");
}

}  // namespace

TEST_CASE("errors from several engines come back as one CompositeError, in engine order") {
  REQUIRE_THROWS_WITH_AS(run_failing(3, {2, 0}),
                         "one or more exceptions raised in: apply\n"
                         "[0:apply] std::runtime_error: boom 0\n"
                         "[2:apply] std::runtime_error: boom 2",
                         CompositeError);
  CompositeError e = composite_of(3, {2, 0});
  CHECK(e.method() == "apply");
  REQUIRE(e.errors().size() == 2);
  CHECK(e.errors()[1].engine_id == 2);
  CHECK(e.errors()[1].type == "std::runtime_error");
  CHECK(e.errors()[1].message == "boom 2");
  CHECK(e.errors()[1].str() == "[2:apply] std::runtime_error: boom 2");
  REQUIRE_THROWS_WITH_AS(e.raise_exception(1), "boom 2", std::runtime_error);
}

TEST_CASE("a CompositeError lists the first four errors, then how many more") {
  CompositeError e = composite_of(10, {0, 1, 2, 3, 4, 5, 6, 7, 8, 9});
  CHECK(std::string(e.what()) ==
        "one or more exceptions raised in: apply\n"
        "[0:apply] std::runtime_error: boom 0\n"
        "[1:apply] std::runtime_error: boom 1\n"
        "[2:apply] std::runtime_error: boom 2\n"
        "[3:apply] std::runtime_error: boom 3\n"
        "... 6 more exceptions ...");
  REQUIRE(e.errors().size() == 10);
  REQUIRE_THROWS_WITH_AS(e.raise_exception(9), "boom 9", std::runtime_error);  // every error reachable
  REQUIRE_THROWS_WITH_AS(e.raise_exception(10),
                         "CompositeError::raise_exception: there is no exception with index 10; there are 10", Error);
}

TEST_CASE("a Reference to a name an engine lacks is a NameError on that engine") {
  Cluster cluster(2);
  auto view = cluster.broadcast_view();
  cluster.broadcast_view({1})["x"] = 3;
  REQUIRE_THROWS_WITH_AS(view.apply(square, Reference("x")).get(),
                         "one or more exceptions raised in: apply\n"
                         "[0:apply] tessera::spmd::NameError: name 'x' is not defined on engine 0",
                         CompositeError);
  REQUIRE_THROWS_WITH_AS(view.pull("nope").get(),
                         "one or more exceptions raised in: pull\n"
                         "[0:pull] tessera::spmd::NameError: name 'nope' is not defined on engine 0\n"
                         "[1:pull] tessera::spmd::NameError: name 'nope' is not defined on engine 1",
                         CompositeError);
  REQUIRE_THROWS_WITH_AS(cluster.broadcast_view({1}).gather<int>("y").get(),
                         "one or more exceptions raised in: gather\n"
                         "[1:gather] tessera::spmd::NameError: name 'y' is not defined on engine 1",
                         CompositeError);
}

TEST_CASE("an argument of the wrong type is a TypeError naming the function") {
  Cluster cluster(1);
  auto view = cluster.broadcast_view();
  view["s"] = std::string("text");
  REQUIRE_THROWS_WITH_AS(view.apply(square, Reference("s")).get(),
                         "one or more exceptions raised in: apply\n"
                         "[0:apply] tessera::TypeError: square: argument 0: expected a value of type int, found "
                         "std::string",
                         CompositeError);
}

TEST_CASE("the wrong number of arguments is a TypeError at once") {
  Cluster cluster(1);
  auto view = cluster.broadcast_view();
  REQUIRE_THROWS_WITH_AS(view.apply(square, 1, 2), "square: task function takes 1 argument(s), but 2 were given",
                         TypeError);
  REQUIRE_THROWS_WITH_AS(view.execute(square), "square: task function takes 1 argument(s), but 0 were given",
                         TypeError);
}

TEST_CASE("a function given with fn goes by that name") {
  Cluster cluster(2);
  auto view = cluster.broadcast_view();
  auto sq = tessera::fn("sq", [](int x) { return x * x; });
  REQUIRE_THROWS_WITH_AS(view.apply(sq, 1, 2), "sq: task function takes 1 argument(s), but 2 were given", TypeError);
  CHECK(view.apply(sq, 3).get() == std::vector<int>{9, 9});
}

TEST_CASE("a result of another type than asked for is a TypeError naming the engine") {
  Cluster cluster(2);
  auto view = cluster.broadcast_view();
  view["v"] = std::string("text");
  REQUIRE_THROWS_WITH_AS(view.pull<int>("v").get(),
                         "pull result of engine 0: expected a value of type int, found std::string", TypeError);
}

TEST_CASE("an exception not derived from std::exception is still reported") {
  Cluster cluster(1);
  REQUIRE_THROWS_WITH_AS(cluster.broadcast_view().apply([] { throw 42; }).get(),
                         "one or more exceptions raised in: apply\n"
                         "[0:apply] unknown: an exception not derived from std::exception",
                         CompositeError);
}

TEST_CASE("a CompositeError raised on an engine is flattened into the outer one") {
  CompositeError inner = composite_of(2, {0, 1});
  CompositeError outer("apply", {make_remote_error(5, "apply", std::make_exception_ptr(inner)),
                                 make_remote_error(6, "apply", std::make_exception_ptr(std::logic_error("x")))});
  REQUIRE(outer.errors().size() == 3);
  CHECK(std::string(outer.what()) ==
        "one or more exceptions raised in: apply\n"
        "[0:apply] std::runtime_error: boom 0\n"
        "[1:apply] std::runtime_error: boom 1\n"
        "[6:apply] std::logic_error: x");
}

TEST_CASE("context() outside an SPMD function is an Error") {
  REQUIRE_THROWS_WITH_AS(context(),
                         "spmd::context() was called outside an SPMD function: only code run by "
                         "BroadcastView::apply or execute has one",
                         Error);
}
