#include <doctest/doctest.h>

#include <chrono>
#include <dirent.h>
#include <set>
#include <thread>

#include "tessera/spmd/spmd.hpp"

using namespace tessera;
using namespace tessera::spmd;
using namespace std::chrono_literals;

namespace {

// The number of threads of this process, as Linux lists them.
int thread_count() {
  int n = 0;
  DIR* dir = opendir("/proc/self/task");
  REQUIRE(dir != nullptr);
  while (dirent* e = readdir(dir)) n += e->d_name[0] != '.';
  closedir(dir);
  return n;
}

}  // namespace

TEST_CASE("a cluster has engines 0..n-1, each on a thread of its own") {
  Cluster cluster(100);
  CHECK(cluster.size() == 100);
  std::vector<int> expected(100);
  for (int i = 0; i < 100; ++i) expected[i] = i;
  CHECK(cluster.ids() == expected);
  auto view = cluster.broadcast_view();
  CHECK(view.apply([] { return context().engine_id(); }).get() == expected);
  auto threads = view.apply([] { return std::hash<std::thread::id>{}(std::this_thread::get_id()); }).get();
  CHECK(std::set<size_t>(threads.begin(), threads.end()).size() == 100);
}

TEST_CASE("engines run concurrently: 100 engines meet at a barrier") {
  Cluster cluster(100);
  auto ar = cluster.broadcast_view().apply([] {
    context().barrier();
    return 1;
  });
  REQUIRE(ar.wait(60s));
  CHECK(ar.get().size() == 100);
}

TEST_CASE("stop and the destructor join every engine thread") {
  int before = thread_count();
  {
    Cluster cluster(50);
    CHECK(thread_count() == before + 50);
    cluster.stop();
    CHECK(thread_count() == before);
    cluster.stop();  // idempotent
  }
  {
    Cluster cluster(20);
    CHECK(thread_count() == before + 20);
  }
  CHECK(thread_count() == before);
}

TEST_CASE("stop lets engines finish what they were sent") {
  Cluster cluster(4);
  auto view = cluster.broadcast_view();
  auto slow = view.apply([] {
    std::this_thread::sleep_for(20ms);
    return 7;
  });
  auto next = view.apply([] { return 8; });
  cluster.stop();
  CHECK(slow.ready());
  CHECK(next.get() == std::vector<int>(4, 8));
}

TEST_CASE("requests after stop raise Error, also from a view that outlives its cluster") {
  std::optional<BroadcastView> view;
  {
    Cluster cluster(2);
    view = cluster.broadcast_view();
    cluster.stop();
    REQUIRE_THROWS_WITH_AS(view->apply([] { return 1; }), "apply: the cluster is stopped; start a new Cluster to run more",
                           Error);
  }
  REQUIRE_THROWS_WITH_AS(view->push("x", 1), "push: the cluster is stopped; start a new Cluster to run more", Error);
}

TEST_CASE("a cluster needs at least one engine") {
  REQUIRE_THROWS_WITH_AS(Cluster(0), "a Cluster needs at least one engine, but n = 0 was given", Error);
  REQUIRE_THROWS_WITH_AS(Cluster(-3), "a Cluster needs at least one engine, but n = -3 was given", Error);
}

TEST_CASE("a view on a subset of engines keeps the order it was given") {
  Cluster cluster(6);
  auto view = cluster.broadcast_view({4, 1, 5});
  CHECK(view.size() == 3);
  CHECK(view.targets() == std::vector<int>{4, 1, 5});
  auto ar = view.apply([] {
    const Context& c = context();
    return std::vector<int>{c.engine_id(), c.rank(), c.size()};
  });
  CHECK(ar.engine_ids() == std::vector<int>{4, 1, 5});
  CHECK(ar.get() == std::vector<std::vector<int>>{{4, 0, 3}, {1, 1, 3}, {5, 2, 3}});
}

TEST_CASE("a subset view rejects an empty list, ids out of range and repeated ids") {
  Cluster cluster(4);
  REQUIRE_THROWS_WITH_AS(cluster.broadcast_view(std::vector<int>{}),
                         "broadcast_view: the list of engine ids is empty; a view needs at least one engine", Error);
  REQUIRE_THROWS_WITH_AS(cluster.broadcast_view({0, 4}),
                         "broadcast_view: engine id 4 is out of range: the cluster has 4 engines (ids 0..3)", Error);
  REQUIRE_THROWS_WITH_AS(cluster.broadcast_view({-1}),
                         "broadcast_view: engine id -1 is out of range: the cluster has 4 engines (ids 0..3)", Error);
  REQUIRE_THROWS_WITH_AS(cluster.broadcast_view({2, 1, 2}), "broadcast_view: engine id 2 is listed twice", Error);
}

TEST_CASE("each engine has its own namespace") {
  Cluster cluster(3);
  auto all = cluster.broadcast_view();
  all.push("x", std::string("everyone")).get();
  cluster.broadcast_view({1})["x"] = std::string("only one");
  CHECK(all["x"].get<std::string>() == std::vector<std::string>{"everyone", "only one", "everyone"});
}
