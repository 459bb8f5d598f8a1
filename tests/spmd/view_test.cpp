#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <string>
#include <thread>

#include "tessera/spmd/spmd.hpp"

using namespace tessera;
using namespace tessera::spmd;
using namespace std::chrono_literals;

TEST_CASE("apply replaces each Reference by the engine's value and passes literals as they are") {
  Cluster cluster(4);
  auto view = cluster.broadcast_view();
  view.scatter("rank", cluster.ids(), /*flatten=*/true).get();
  auto ar = view.apply([](const std::string& prefix, int rank, int size) { return prefix + std::to_string(rank * 10 + size); },
                       "r", Reference("rank"), 4);
  CHECK(ar.get() == std::vector<std::string>{"r4", "r14", "r24", "r34"});
}

TEST_CASE("apply takes an untyped function of the argument values") {
  Cluster cluster(2);
  auto ar = cluster.broadcast_view().apply(
      [](std::span<const Value> args) { return static_cast<int>(args.size()) + args[1].as<int>(); }, 1.5, 40);
  CHECK(ar.get() == std::vector<int>{42, 42});
}

TEST_CASE("apply of a function returning nothing gives AsyncResult<void>") {
  Cluster cluster(3);
  std::atomic<int> calls{0};
  AsyncResult<void> ar = cluster.broadcast_view().apply([&calls](int by) { calls += by; }, 2);
  ar.get();
  CHECK(calls == 6);
  CHECK(ar.successful());
}

TEST_CASE("execute runs for side effects on each engine's namespace") {
  Cluster cluster(3);
  auto view = cluster.broadcast_view();
  view.scatter("x", std::vector<int>{1, 2, 3}, true);
  view.execute([] {
    const Context& c = context();
    c.set("y", c.get<int>("x") * 100);
  });
  CHECK(view.pull<int>("y").get() == std::vector<int>{100, 200, 300});
  CHECK(view.execute([] { return 5; }).method() == "execute");
}

TEST_CASE("push, pull and view[name] move named values") {
  Cluster cluster(2);
  auto view = cluster.broadcast_view();
  view.push({{"a", 1}, {"b", std::string("two")}}).get();
  CHECK(view.pull<int>("a").get() == std::vector<int>{1, 1});
  CHECK(view["b"].get<std::string>() == std::vector<std::string>{"two", "two"});
  view["a"] = 2.5;
  std::vector<Value> raw = view.pull("a").get();
  REQUIRE(raw.size() == 2);
  CHECK(raw[1].as<double>() == 2.5);
}

TEST_CASE("scatter splits as ipyparallel does and gather joins the parts back") {
  Cluster cluster(4);
  auto view = cluster.broadcast_view();
  std::vector<int> seq = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9};
  view.scatter("part", seq).get();
  CHECK(view.pull<std::vector<int>>("part").get() ==
        std::vector<std::vector<int>>{{0, 1, 2}, {3, 4, 5}, {6, 7}, {8, 9}});
  CHECK(view.gather<int>("part").get() == seq);

  // flatten: a part of exactly one item is set as the item
  view.scatter("rank", cluster.ids(), true).get();
  CHECK(view.pull<int>("rank").get() == std::vector<int>{0, 1, 2, 3});
  CHECK(view.gather<int>("rank").get() == std::vector<int>{0, 1, 2, 3});

  // fewer items than engines: the last engines get empty parts, flatten or not
  view.scatter("few", std::vector<std::string>{"a", "b"}, true).get();
  CHECK(view.pull("few").get()[0].as<std::string>() == "a");
  CHECK(view.pull("few").get()[3].as<std::vector<std::string>>().empty());
  CHECK(view.gather<std::string>("few").get() == std::vector<std::string>{"a", "b"});
}

TEST_CASE("scatter and gather on a subset view follow the view's order") {
  Cluster cluster(5);
  auto view = cluster.broadcast_view({3, 0});
  view.scatter("s", std::vector<int>{7, 8, 9}).get();
  CHECK(cluster.broadcast_view({3})["s"].get<std::vector<int>>() == std::vector<std::vector<int>>{{7, 8}});
  CHECK(view.gather<int>("s").get() == std::vector<int>{7, 8, 9});
}

TEST_CASE("requests reach every engine in the order they were made") {
  Cluster cluster(8);
  auto view = cluster.broadcast_view();
  for (int i = 0; i < 200; ++i) {
    view.push("n", i);
    view.execute([] {
      const Context& c = context();
      c.set("sum", (c.get<int>("n") == 0 ? 0 : c.get<int>("sum")) + c.get<int>("n"));
    });
  }
  CHECK(view.pull<int>("sum").get() == std::vector<int>(8, 199 * 200 / 2));
}

TEST_CASE("an AsyncResult waits, times out, and reports its engines and elapsed time") {
  Cluster cluster(3);
  std::atomic<bool> release{false};
  auto ar = cluster.broadcast_view({2, 0}).apply([&release] {
    while (!release.load()) std::this_thread::sleep_for(1ms);
    return context().engine_id();
  });
  CHECK_FALSE(ar.ready());
  CHECK_FALSE(ar.wait(10ms));
  CHECK_FALSE(ar.successful());
  REQUIRE_THROWS_WITH_AS(ar.get(20ms), "apply: result not ready after 0.02 s (2 of 2 engines still running)",
                         TimeoutError);
  std::this_thread::sleep_for(30ms);
  release = true;
  CHECK(ar.wait(std::chrono::seconds(30)));
  CHECK(ar.ready());
  CHECK(ar.get(1s) == std::vector<int>{2, 0});
  CHECK(ar.engine_ids() == std::vector<int>{2, 0});
  CHECK(ar.elapsed() >= 50ms);
  auto done = ar.elapsed();
  std::this_thread::sleep_for(5ms);
  CHECK(ar.elapsed() == done);  // stops at completion
}
