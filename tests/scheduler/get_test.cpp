#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include <oneapi/tbb/global_control.h>

#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"
#include "testing.hpp"

using namespace tessera;
using tessera::testing::Counted;

namespace {

template <class T>
long total(const std::vector<T>& xs) {
  long s = 0;
  for (T x : xs) s += x;
  return s;
}

// n independent leaves (`name`, i) feeding one sum, `sum_key`.
template <class R>
Graph fan_in(int n, std::function<R(int)> leaf, const char* name = "leaf", const char* sum_key = "sum") {
  Graph g;
  std::vector<Arg> parts;
  for (int i = 0; i < n; ++i) {
    g.task(Key(name, {i}), fn(name, leaf), i);
    parts.emplace_back(ref(Key(name, {i})));
  }
  g.put(sum_key, Task(fn("sum", total<R>), ArgList{std::move(parts)}));
  return g;
}

Graph fan_in(int n, std::function<int(int)> leaf) { return fan_in<int>(n, std::move(leaf)); }

}  // namespace

TEST_CASE("get gives get_sync's results at 1, 2, 4 and 8 workers; 0 means all hardware threads") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);  // CI has 2 cores
  Graph g = fan_in(500, [](int i) { return i * 3; });
  const long expected = get_sync(g, "sum").as<long>();
  CHECK(expected == 3L * 499 * 500 / 2);
  for (int workers : {0, 1, 2, 4, 8}) {
    RunStats stats;
    CHECK(get(g, "sum", {.num_workers = workers, .stats = &stats}).as<long>() == expected);
    CHECK(stats.tasks_run == 501);
    CHECK(stats.num_workers == (workers == 0 ? static_cast<int>(std::thread::hardware_concurrency()) : workers));
  }
}

TEST_CASE("get uses no more workers than oneTBB's thread cap") {
  tbb::global_control cap(tbb::global_control::max_allowed_parallelism, 2);
  RunStats stats;
  get(fan_in(10, [](int i) { return i; }), "sum", {.num_workers = 6, .stats = &stats});
  CHECK(stats.num_workers == 2);
}

TEST_CASE("the caller's thread is worker 0 and works; callbacks never overlap") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 4);
  const auto caller = std::this_thread::get_id();
  std::atomic<int> on_caller{0};
  Graph g = fan_in(400, [&](int i) {
    if (std::this_thread::get_id() == caller) ++on_caller;
    std::this_thread::sleep_for(std::chrono::microseconds(50));
    return i;
  });
  std::atomic<bool> inside{false};
  std::atomic<int> overlaps{0}, bad_worker{0};
  std::set<int> workers_seen;
  std::vector<int> worker_of(1000, -1);
  auto enter = [&] {
    if (inside.exchange(true)) ++overlaps;
    std::this_thread::yield();
    inside = false;
  };
  Callbacks cb;
  cb.pretask = [&](const RunState&, uint32_t t, int w) {
    enter();
    if (w < 0 || w >= 4) ++bad_worker;
    if (w == 0 && std::this_thread::get_id() != caller) ++bad_worker;
    worker_of[t] = w;
    workers_seen.insert(w);
  };
  cb.posttask = [&](const RunState&, uint32_t t, const Value&, int w) {
    enter();
    if (worker_of[t] != w) ++bad_worker;
  };
  CHECK(get(g, "sum", {.num_workers = 4, .callbacks = {cb}}).as<long>() == 399L * 400 / 2);
  CHECK(overlaps == 0);
  CHECK(bad_worker == 0);
  CHECK(on_caller > 0);
  CHECK(workers_seen.count(0) == 1);
}

TEST_CASE("after a run of tiny tasks, two tasks that must overlap still get a worker each") {
  // A binary tree of tiny additions keeps both workers meeting at the lock, so
  // the run goes narrow (worker 0 alone, the others parked); a task that waits
  // for another must not then leave the other waiting for a parked worker.
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 2);
  constexpr int leaves = 1 << 16;
  for (int round = 0; round < 3; ++round) {
    Graph g;
    for (int i = 0; i < leaves; ++i) g.task(Key("add", {0, i}), fn("one", [](int) { return 1L; }), i);
    int level = 0;
    for (int width = leaves / 2; width >= 1; width /= 2, ++level) {
      for (int i = 0; i < width; ++i) {
        g.task(Key("add", {level + 1, i}), fn("add", [](long x, long y) { return x + y; }),
               ref(Key("add", {level, 2 * i})), ref(Key("add", {level, 2 * i + 1})));
      }
    }
    const Key top("add", {level, 0});
    std::atomic<int> arrived{0};
    auto meet = [&arrived](long sum) {
      ++arrived;
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (arrived < 2) {
        if (std::chrono::steady_clock::now() > deadline) throw std::runtime_error("the other task never started");
        std::this_thread::yield();
      }
      return sum;
    };
    g.task("a", fn("meet", meet), ref(top));
    g.task("b", fn("meet", meet), ref(top));
    const Result r = get(g, Keys({Key("a"), Key("b")}), {.num_workers = 2});
    CHECK(r[0].as<long>() == leaves);
    CHECK(r[1].as<long>() == leaves);
  }
}

TEST_CASE("a task may call get on another graph without deadlock") {
  Graph inner = fan_in(50, [](int i) { return i; });
  Graph outer = fan_in<long>(16, [&inner](int k) { return get(inner, "sum", {.num_workers = 2}).as<long>() + k; },
                             "o", "all");
  for (int workers : {2, 4}) {
    CHECK(get(outer, "all", {.num_workers = workers}).as<long>() == 16 * 1225 + 120);
  }
}

TEST_CASE("runs from several threads at once share arenas and each get their own results") {
  std::vector<std::thread> callers;
  std::atomic<int> wrong{0};
  for (int c = 0; c < 4; ++c) {
    callers.emplace_back([c, &wrong] {
      Graph g = fan_in(100, [c](int i) { return i * c; });
      for (int rep = 0; rep < 20; ++rep) {
        if (get(g, "sum", {.num_workers = 2}).as<long>() != 4950L * c) ++wrong;
      }
    });
  }
  for (auto& t : callers) t.join();
  CHECK(wrong == 0);
}

TEST_CASE("on the first error nothing new starts, running tasks finish, and the caller gets the TaskError") {
  // 1000 slow leaves feeding sum; the tenth leaf to start fails
  std::atomic<int> started{0}, finished{0};
  Graph g = fan_in(1000, [&](int i) {
    if (++started == 10) throw std::runtime_error("bad input");
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
    ++finished;
    return i;
  });
  RunStats stats;
  REQUIRE_THROWS_WITH_AS(get(g, "sum", {.num_workers = 2, .stats = &stats}), doctest::Contains("(leaf) failed: bad input"),
                         TaskError);
  --started;  // the failed one
  CHECK(started == finished);           // get returned after the running tasks finished
  CHECK(started.load() < 100);          // and did not go on starting the other leaves
  CHECK(stats.tasks_run == static_cast<size_t>(finished.load()));
}

TEST_CASE("rerun_exceptions_locally reruns the failed task on the caller's thread") {
  std::vector<std::thread::id> runs;
  std::mutex m;
  Graph g = fan_in(64, [](int i) { return i; });
  g.task("bad", fn("bad", [&](long) -> int {
    std::lock_guard lk(m);
    runs.push_back(std::this_thread::get_id());
    throw std::runtime_error("bad sum");
  }), ref("sum"));
  REQUIRE_THROWS_WITH_AS(get(g, "bad", {.num_workers = 4, .rerun_exceptions_locally = true}),
                         "task bad (bad) failed: bad sum", TaskError);
  REQUIRE(runs.size() == 2);
  CHECK(runs[1] == std::this_thread::get_id());
}

TEST_CASE("cancelling from another thread stops the run, raises Cancelled and releases every result") {
  CancellationToken token;
  std::atomic<int> started{0};
  {
    Graph g;
    std::vector<Arg> parts;
    for (int i = 0; i < 2000; ++i) {
      g.task(Key("c", {i}), fn("slow", [&started, i](int) {
        ++started;
        std::this_thread::sleep_for(std::chrono::microseconds(200));
        return Value::make<Counted>(i, 1);
      }), i);
      parts.emplace_back(ref(Key("c", {i})));
    }
    g.put("all", Task(fn("count", [](const ValueList& xs) { return static_cast<int>(xs.size()); }), ArgList{std::move(parts)}));
    std::thread canceller([&] {
      while (started < 20) std::this_thread::yield();
      token.cancel();
    });
    REQUIRE_THROWS_AS(get(g, "all", {.num_workers = 3, .cancel = token}), Cancelled);
    canceller.join();
    CHECK(started < 2000);
    CHECK(Counted::alive == 0);
  }
}
