// Random DAGs (up to 10^4 tasks, random fan-in and fan-out, random failing
// tasks): every worker count gives the serial evaluation's results, each result
// is released exactly once and at the right moment, requested ones never, and
// after an error or a cancellation no result is left alive.
#include <doctest/doctest.h>

#include <oneapi/tbb/global_control.h>

#include <string>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"
#include "testing.hpp"

using namespace tessera;
using tessera::testing::Counted;
using tessera::testing::RandomDag;

namespace {

constexpr int kWorkerCounts[] = {0, 1, 2, 4, 8};  // 0: get_sync

Result run(const Plan& plan, int workers, const GetOptions& base) {
  GetOptions opts = base;
  opts.num_workers = workers;
  return workers == 0 ? get_sync(plan, opts) : get(plan, opts);
}

// Watches releases from posttask (hooks are serialized, so plain counters do).
// When every reader of a task's result has finished, that result must already be
// destroyed (unless requested); any violation is counted, checked afterwards on
// the test's thread.
struct ReleaseWatch {
  const Plan& plan;
  std::vector<int>& destroyed;  // by graph id
  std::vector<uint32_t> readers_done;
  long violations = 0;

  Callbacks callbacks() {
    readers_done.assign(plan.size(), 0);
    Callbacks cb;
    cb.posttask = [this](const RunState&, uint32_t t, const Value&, int) {
      for (uint32_t d : plan.dependencies(t)) {
        if (++readers_done[d] != plan.dependents(d).size() || d >= plan.num_tasks()) continue;
        const int expected = plan.is_requested(d) ? 0 : 1;
        if (destroyed[plan.graph_id(d)] != expected) ++violations;
      }
      if (destroyed[plan.graph_id(t)] != 0) ++violations;  // its own result is alive
    };
    return cb;
  }
};

}  // namespace

TEST_CASE("random DAGs: the same results at every worker count, each result released exactly once") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);  // CI has 2 cores
  const uint32_t sizes[] = {1, 2, 7, 40, 300, 1000, 3000, 10000};
  uint32_t seed = 100;
  for (uint32_t n : sizes) {
    RandomDag d = testing::random_dag(++seed, n, 0.0);
    Plan plan(d.graph, d.request);
    std::vector<uint64_t> expected;
    for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
    std::vector<int> destroyed(n, 0);
    Counted::destroyed = &destroyed;
    for (int workers : kWorkerCounts) {
      for (bool watch : {false, true}) {
        CAPTURE(n);
        CAPTURE(workers);
        CAPTURE(watch);
        std::fill(destroyed.begin(), destroyed.end(), 0);
        ReleaseWatch w{plan, destroyed, {}, 0};
        GetOptions opts;
        if (watch) opts.callbacks.push_back(w.callbacks());
        {
          Result r = run(plan, workers, opts);
          std::vector<uint64_t> got;
          testing::flatten_values(r, got);
          CHECK(got == expected);
          CHECK(w.violations == 0);
          for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
            const int gid = static_cast<int>(plan.graph_id(t));
            if (destroyed[gid] != (plan.is_requested(t) ? 0 : 1)) FAIL_CHECK("task " << gid << " released " << destroyed[gid] << " times");
          }
        }
        for (uint32_t t = 0; t < plan.num_tasks(); ++t) CHECK(destroyed[plan.graph_id(t)] == 1);
        CHECK(Counted::alive == 0);
      }
    }
    Counted::destroyed = nullptr;
  }
}

TEST_CASE("random DAGs with failing tasks: a TaskError from a failing task, and nothing left alive") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  uint32_t seed = 500;
  for (uint32_t n : {20u, 200u, 2000u, 10000u}) {
    RandomDag d = testing::random_dag(++seed, n, 0.002 + 2.0 / n);
    Plan plan(d.graph, d.request);
    bool any_needed_fails = false;
    for (uint32_t t = 0; t < plan.num_tasks(); ++t) any_needed_fails |= d.fails[plan.graph_id(t)];
    for (int workers : kWorkerCounts) {
      CAPTURE(n);
      CAPTURE(workers);
      RunStats stats;
      try {
        Result r = run(plan, workers, {.stats = &stats});
        CHECK_FALSE(any_needed_fails);
      } catch (const TaskError& e) {
        REQUIRE(e.key().index().size() == 1);
        CHECK(d.fails[static_cast<size_t>(e.key().index()[0])]);
        CHECK(e.message().find("fails on purpose") != std::string::npos);
        CHECK(stats.tasks_run < stats.tasks);
      }
      CHECK(Counted::alive == 0);
    }
  }
}

TEST_CASE("random DAGs cancelled midway: Cancelled, and nothing left alive") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  RandomDag d = testing::random_dag(900, 5000, 0.0);
  Plan plan(d.graph, d.request);
  for (int workers : kWorkerCounts) {
    CAPTURE(workers);
    CancellationToken token;
    Callbacks cancel_at_100;
    cancel_at_100.posttask = [token](const RunState& s, uint32_t, const Value&, int) {
      if (s.num_finished() >= 100) token.cancel();  // >=: two workers finishing at once may both see 101
    };
    RunStats stats;
    REQUIRE_THROWS_AS(run(plan, workers, {.callbacks = {cancel_at_100}, .cancel = token, .stats = &stats}), Cancelled);
    CHECK(stats.tasks_run >= 100);
    CHECK(stats.tasks_run < 100 + 8);  // running ones finished, none started after
    CHECK(Counted::alive == 0);
  }
}
