#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/spmd/spmd.hpp"

using namespace tessera;
using namespace tessera::spmd;
using namespace std::chrono_literals;

TEST_CASE("barrier: no engine passes before every engine has arrived") {
  Cluster cluster(100);
  auto arrived = std::make_shared<std::vector<std::atomic<int>>>(100);
  auto ar = cluster.broadcast_view().apply([arrived] {
    const Context& c = context();
    (*arrived)[c.rank()] = 1;
    c.barrier();
    int seen = 0;
    for (const auto& a : *arrived) seen += a.load();
    c.barrier();
    (*arrived)[c.rank()] = 0;  // a second round reuses the barrier
    c.barrier();
    for (const auto& a : *arrived) seen += 10 * a.load();
    return seen;
  });
  REQUIRE(ar.wait(60s));
  CHECK(ar.get() == std::vector<int>(100, 100));
}

TEST_CASE("allreduce: sum, min, max and any function, the same on every engine") {
  Cluster cluster(8);
  auto view = cluster.broadcast_view();
  auto ints = view.apply([] {
    const Context& c = context();
    int r = c.rank() + 1;
    return std::vector<int>{c.allreduce(r, ReduceOp::sum), c.allreduce(r, ReduceOp::min),
                            c.allreduce(r, ReduceOp::max), c.allreduce(r, std::multiplies<int>())};
  });
  CHECK(ints.get() == std::vector<std::vector<int>>(8, {36, 1, 8, 40320}));
  auto doubles = view.apply([] {
    const Context& c = context();
    return c.allreduce(0.1 * c.rank(), ReduceOp::sum);
  });
  std::vector<double> d = doubles.get();
  CHECK(d[0] == doctest::Approx(2.8));
  CHECK(d == std::vector<double>(8, d[0]));  // bit-identical: reduced in rank order everywhere
}

TEST_CASE("allgather gives every engine's value in rank order") {
  Cluster cluster(5);
  auto ar = cluster.broadcast_view({4, 2, 0}).apply([] {
    std::vector<Value> all = context().allgather(std::to_string(context().engine_id()));
    std::string s;
    for (const Value& v : all) s += v.as<std::string>();
    return s;
  });
  CHECK(ar.get() == std::vector<std::string>(3, "420"));
}

TEST_CASE("an engine that raises before a barrier breaks it for the others") {
  Cluster cluster(4);
  auto ar = cluster.broadcast_view().apply([] {
    if (context().rank() == 2) throw std::runtime_error("no barrier for me");
    context().barrier();
    return 0;
  });
  REQUIRE(ar.wait(60s));
  const std::string broken = "tessera::spmd::BarrierError: barrier broken: engine 2 raised an error before reaching it";
  std::string expected = "one or more exceptions raised in: apply\n[0:apply] " + broken + "\n[1:apply] " + broken +
                         "\n[2:apply] std::runtime_error: no barrier for me\n[3:apply] " + broken;
  REQUIRE_THROWS_WITH_AS(ar.get(), expected.c_str(), CompositeError);
}

TEST_CASE("an engine that returns without a barrier the others call breaks it") {
  Cluster cluster(3);
  auto ar = cluster.broadcast_view({0, 2}).apply([] {
    if (context().engine_id() == 0) context().barrier();
    return 1;
  });
  REQUIRE(ar.wait(60s));
  REQUIRE_THROWS_WITH_AS(ar.get(),
                         "one or more exceptions raised in: apply\n"
                         "[0:apply] tessera::spmd::BarrierError: barrier broken: engine 2 returned from the SPMD "
                         "function without reaching it (every engine of an apply must make the same collective "
                         "calls)",
                         CompositeError);
}

TEST_CASE("collectives of successive applies never cross") {
  Cluster cluster(6);
  auto view = cluster.broadcast_view();
  std::vector<AsyncResult<int>> results;
  for (int i = 0; i < 50; ++i) {
    results.push_back(view.apply(
        [](int i) {
          const Context& c = context();
          c.barrier();
          return c.allreduce(i, ReduceOp::sum);
        },
        i));
  }
  for (int i = 0; i < 50; ++i) CHECK(results[i].get() == std::vector<int>(6, 6 * i));
}
