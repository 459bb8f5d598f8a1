// across::get over ranks that are threads of this process (thread_communicators):
// the same results as one process on dask's graphs and on random DAGs, errors
// that reach every rank, and each result sent once per rank that needs it.
// tests/mpi/get_test.cpp runs the same over MPI.
#include <doctest/doctest.h>

#include <cstring>
#include <exception>
#include <functional>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "across_graphs.hpp"
#include "scheduler/testing.hpp"
#include "tessera/across/get.hpp"
#include "tessera/across/placement.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/inbox.hpp"

using namespace tessera;

namespace across_test {  // named: a unity build merges the test files' anonymous namespaces

namespace {

// What one rank's get gave: its result or its error, and its figures.
struct RankRun {
  std::optional<Result> result;
  std::exception_ptr error;
  RunStats stats;
};

// Calls across::get(graph_of(r), keys) on `n` thread ranks r at once, each with `base` plus its communicator.
std::vector<RankRun> get_on_ranks(int n, const std::function<const Graph&(int)>& graph_of, const Keys& keys,
                                  const GetOptions& base) {
  const auto comms = thread_communicators(n);
  std::vector<RankRun> runs(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      RankRun& run = runs[static_cast<size_t>(r)];
      GetOptions opts = base;
      opts.communicator = comms[static_cast<size_t>(r)];
      opts.stats = &run.stats;
      try {
        run.result = across::get(graph_of(r), keys, opts);
      } catch (...) {
        run.error = std::current_exception();
      }
    });
  }
  for (auto& t : threads) t.join();
  return runs;
}

// The same graph on every rank.
std::vector<RankRun> get_on_ranks(int n, const Graph& g, const Keys& keys, const GetOptions& base) {
  return get_on_ranks(n, [&g](int) -> const Graph& { return g; }, keys, base);
}

std::string what(const std::exception_ptr& e) {
  try {
    std::rethrow_exception(e);
  } catch (const std::exception& x) {
    return x.what();
  }
}

}  // namespace

TEST_CASE("across thread ranks: dask's graphs give one process's results on rank 0, bit for bit") {
  testing::for_each_checked_graph([](const std::string&, const Graph& g, const Keys& keys, const std::vector<uint64_t>& expected) {
    for (int n : {2, 3, 4}) {
      CAPTURE(n);
      const auto runs = get_on_ranks(n, g, keys, {.num_workers = 2});
      for (int r = 0; r < n; ++r) {
        CAPTURE(r);
        const RankRun& run = runs[static_cast<size_t>(r)];
        REQUIRE_MESSAGE(run.error == nullptr, what(run.error));
        if (r == 0) CHECK(testing::checked_values(*run.result) == expected);
        if (r != 0) CHECK(testing::checked_values(*run.result) == std::vector<uint64_t>(expected.size(), 0));  // empty values
      }
    }
  });
}

TEST_CASE("across thread ranks: random DAGs give the serial evaluation, on every rank when asked") {
  uint32_t seed = 500;
  for (uint32_t size : {1u, 5u, 60u, 400u, 2000u}) {
    for (int n : {2, 3, 4}) {
      CAPTURE(size);
      CAPTURE(n);
      const auto d = testing::random_dag(++seed, size, 0.0, [](uint32_t i) { return 1 + i % 5; });
      std::vector<uint64_t> expected;
      for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
      const bool everywhere = seed % 2 == 0;
      const auto runs = get_on_ranks(n, d.graph, d.request, {.num_workers = 2, .result_on_every_rank = everywhere});
      for (int r = 0; r < n; ++r) {
        CAPTURE(r);
        const RankRun& run = runs[static_cast<size_t>(r)];
        REQUIRE_MESSAGE(run.error == nullptr, what(run.error));
        if (r == 0 || everywhere) {
          std::vector<uint64_t> got;
          testing::flatten_values(*run.result, got);
          CHECK(got == expected);
        }
      }
    }
  }
}

// The same random DAGs with keys without indices ("n17" for ("n", 17)): placed
// by runs of order instead of by block.
TEST_CASE("across thread ranks: random DAGs of keys without indices give one process's results") {
  uint32_t seed = 900;
  for (uint32_t size : {3u, 80u, 1500u}) {
    for (int n : {2, 4}) {
      CAPTURE(size);
      CAPTURE(n);
      const auto d = testing::random_dag(++seed, size, 0.0);
      auto flat = [](const Key& k) {
        std::string name = "n";
        return Key(name += std::to_string(k.index()[0]));
      };
      const Graph g = testing::checked_graph(d.graph, flat);
      std::vector<Key> keys;
      for (uint32_t i : d.requested) keys.push_back(flat(Key("n", {i})));
      const std::vector<uint64_t> expected = testing::checked_values(get_sync(g, Keys(keys)));
      const auto runs = get_on_ranks(n, g, Keys(keys), {.num_workers = 2});
      for (const RankRun& run : runs) REQUIRE_MESSAGE(run.error == nullptr, what(run.error));
      CHECK(testing::checked_values(*runs[0].result) == expected);
      if (size > 100) CHECK(runs[0].stats.messages_received > 0);  // the work did spread over the ranks
    }
  }
}

// Eight blocks ("x", i) on four ranks (two each); ("y", i) reads ("x", i) and
// ("x", 7), the block of rank 3, which throws:
//   x0 x1 | x2 x3 | x4 x5 | x6 x7 (throws)
//   every y(i) waits for x7
TEST_CASE("across thread ranks: a task that throws on rank 3 of 4 stops every rank, and rank 0 names key and rank") {
  Graph g;
  std::vector<Keys> keys;
  for (int64_t i = 0; i < 8; ++i) {
    const bool fails = i == 7;
    auto body = [fails](std::span<const Value>) -> Value {
      if (fails) throw std::runtime_error("kaboom");
      return Value(uint64_t{1});
    };
    g.put(Key("x", {i}), Task::from_args(fn("boom", body), {}));
    g.task(Key("y", {i}), [](uint64_t a, uint64_t b) { return a + b; }, ref(Key("x", {i})), ref(Key("x", {7})));
    keys.emplace_back(Key("y", {i}));
  }
  const Plan plan(g, Keys(keys));
  const std::vector<int> owner = place(plan, 4);
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    if (plan.key(t) == Key("x", {7})) REQUIRE(owner[t] == 3);
  }
  const auto runs = get_on_ranks(4, g, Keys(keys), {.num_workers = 2});
  const std::string message = "task ('x', 7) (boom) failed: on rank 3: kaboom";
  for (int r = 0; r < 4; ++r) {
    CAPTURE(r);
    const RankRun& run = runs[static_cast<size_t>(r)];
    REQUIRE(run.error != nullptr);
    CHECK_THROWS_WITH_AS(std::rethrow_exception(run.error), message.c_str(), TaskError);
  }
  try {
    std::rethrow_exception(runs[0].error);
  } catch (const TaskError& e) {
    CHECK(e.key() == Key("x", {7}));
    CHECK(e.function() == "boom");
  }
}

// ("src", 0) is the only block of its array: rank 0. ("use", 0..3) reads it;
// use2 and use3 are rank 1's. src goes to rank 1 once; use2 and use3 come back
// to rank 0, which asked for them.
//   src --> use0 use1 (rank 0)
//       \-> use2 use3 (rank 1)
TEST_CASE("across thread ranks: a result read by two tasks on another rank is sent to it once") {
  Graph g;
  g.task(Key("src", {0}), [] { return uint64_t{5}; });
  std::vector<Keys> keys;
  for (int64_t i = 0; i < 4; ++i) {
    g.task(Key("use", {i}), [i](uint64_t s) { return s + static_cast<uint64_t>(i); }, ref(Key("src", {0})));
    keys.emplace_back(Key("use", {i}));
  }
  const auto runs = get_on_ranks(2, g, Keys(keys), {.num_workers = 2});
  REQUIRE(runs[0].error == nullptr);
  REQUIRE(runs[1].error == nullptr);
  CHECK(testing::checked_values(*runs[0].result) == std::vector<uint64_t>{5, 6, 7, 8});
  CHECK(runs[0].stats.messages_sent == 1);      // src, once
  CHECK(runs[1].stats.messages_received == 1);
  CHECK(runs[1].stats.messages_sent == 2);      // use2, use3 for the caller
  CHECK(runs[0].stats.messages_received == 2);
  CHECK(runs[0].stats.bytes_sent == runs[1].stats.bytes_received);
  CHECK(runs[1].stats.bytes_sent == runs[0].stats.bytes_received);
  CHECK(runs[0].stats.bytes_sent > 0);
}

// The all-to-all step of across_graphs.hpp, blocks of 64 KiB, under a limit
// of six blocks per rank: each rank must receive twelve or six blocks
// (4 or 2 ranks) beside its own and the y it computes, so it spills and
// leaves results in the transport; it never holds more than its limit plus one
// task's need (y's five blocks).
TEST_CASE("across thread ranks: under a memory limit, results equal one process's and each rank stays within its limit") {
  constexpr size_t kElems = 8192, kBlock = kElems * sizeof(double) + sizeof(std::vector<double>);  // nbytes
  std::vector<Key> request;
  const Graph g = testing::all_to_all_graph(16, kElems, request);
  const Result expected = get_sync(g, Keys(request));
  for (int n : {2, 4}) {
    CAPTURE(n);
    const size_t limit = 6 * kBlock, need = 5 * kBlock;
    // The rank as a whole: besides, one result's wire form (a block and its header) on its way out.
    const size_t wire = kBlock + 64;
    const auto runs = get_on_ranks(n, g, Keys(request), {.num_workers = 2, .memory_limit = limit});
    size_t deferred = 0;
    for (int r = 0; r < n; ++r) {
      CAPTURE(r);
      const RankRun& run = runs[static_cast<size_t>(r)];
      REQUIRE_MESSAGE(run.error == nullptr, what(run.error));
      CHECK(run.stats.peak_held_bytes <= limit + need);
      // What the rank holds beside its run's results counts too: received
      // results not yet taken, serialized results its sends still keep.
      CHECK(run.stats.peak_rank_bytes <= limit + need + wire);
      CHECK(run.stats.peak_rank_bytes > 0);
      deferred += run.stats.receives_deferred;
    }
    CHECK(deferred > 0);
    for (size_t k = 0; k < request.size(); ++k) {
      const double a = (*runs[0].result)[k].as<double>(), b = expected[k].as<double>();
      CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    }
  }
}

// One block per rank; rank 1's ("x", 1) is 1 MiB, past every rank's limit of
// 256 KiB: every rank throws the MemoryLimitError of rank 1, naming its task.
//   x0 (rank 0)  x1 (rank 1, too big) ...  -->  each ("y", i) reads x(i) and x1
TEST_CASE("across thread ranks: a limit too small for a task on rank 1 is a MemoryLimitError on every rank naming rank and task") {
  for (int n : {2, 3}) {
    CAPTURE(n);
    std::vector<Keys> keys;
    const Graph g = testing::big_block_on_rank_1_graph(n, keys);
    const auto runs = get_on_ranks(n, g, Keys(keys), {.num_workers = 2, .memory_limit = 256 << 10});
    for (int r = 0; r < n; ++r) {
      CAPTURE(r);
      const RankRun& run = runs[static_cast<size_t>(r)];
      REQUIRE(run.error != nullptr);
      CHECK_THROWS_WITH_AS(std::rethrow_exception(run.error),
                           doctest::Contains("cannot be met: task ('x', 1) needs 1.0 MiB (1048600) on rank 1 "),
                           MemoryLimitError);
      try {
        std::rethrow_exception(run.error);
      } catch (const MemoryLimitError& e) {
        CHECK(e.task() == Key("x", {1}));
        CHECK(e.limit() == size_t{256} << 10);
      }
    }
  }
}

TEST_CASE("across one thread rank: the run is one process's run") {
  Graph g;
  g.put("a", uint64_t{2});
  g.task("b", [](uint64_t a) { return a * 21; }, tessera::ref("a"));
  const auto runs = get_on_ranks(1, g, "b", {});
  REQUIRE(runs[0].error == nullptr);
  CHECK(runs[0].result->as<uint64_t>() == 42);
  CHECK(runs[0].stats.messages_sent == 0);
}

// A result of a type without a wire form cannot reach the rank that reads it:
// its rank fails, and the other rank hears of it instead of waiting.
//   ("p", 0) (rank 0, no wire form) --> ("q", 1) (rank 1)
TEST_CASE("across thread ranks: a result that cannot travel stops every rank, naming its type") {
  struct NoWire {
    int v = 1;
  };
  Graph g;
  g.task(Key("p", {0}), [] { return NoWire{}; });
  g.task(Key("q", {0}), [](const NoWire& p) { return uint64_t(p.v); }, ref(Key("p", {0})));
  g.task(Key("q", {1}), [](const NoWire& p) { return uint64_t(p.v) + 1; }, ref(Key("p", {0})));
  const auto runs = get_on_ranks(2, g, Keys({Key("q", {0}), Key("q", {1})}), {.num_workers = 2});
  REQUIRE(runs[0].error != nullptr);
  REQUIRE(runs[1].error != nullptr);
  CHECK_THROWS_WITH_AS(std::rethrow_exception(runs[0].error), doctest::Contains("to another process: it has no wire form"),
                       Error);
  CHECK_THROWS_WITH_AS(std::rethrow_exception(runs[1].error), doctest::Contains("on rank 0: cannot send a value of type"),
                       Error);
  // A requested result of rank 1's, on its way to rank 0 after rank 1's run ended.
  Graph h;
  h.task(Key("r", {0}), [] { return uint64_t{1}; });
  h.task(Key("r", {1}), [] { return NoWire{}; });
  const auto sent = get_on_ranks(2, h, Keys({Key("r", {0}), Key("r", {1})}), {.num_workers = 2});
  REQUIRE(sent[0].error != nullptr);
  CHECK_THROWS_WITH_AS(std::rethrow_exception(sent[0].error), doctest::Contains("on rank 1: cannot send a value of type"),
                       Error);
}

// Rank 1 names its blocks otherwise (as per-process array tokens would): every
// rank refuses the run before any task, naming the rank, instead of waiting for
// results that rank 1 would never send.
TEST_CASE("across thread ranks: a rank that built another graph than rank 0's stops every rank, naming it") {
  Graph same, other;
  for (Graph* g : {&same, &other}) {
    const std::string name = g == &same ? "x" : "x-other";
    for (int64_t i = 0; i < 4; ++i) g->task(Key(name, {i}), [i] { return uint64_t(i); });
    g->task("total", [](uint64_t a, uint64_t b, uint64_t c, uint64_t d) { return a + b + c + d; },
            ref(Key(name, {0})), ref(Key(name, {1})), ref(Key(name, {2})), ref(Key(name, {3})));
  }
  const auto runs = get_on_ranks(3, [&](int r) -> const Graph& { return r == 1 ? other : same; }, "total", {});
  for (const RankRun& run : runs) {
    REQUIRE(run.error != nullptr);
    CHECK_THROWS_WITH_AS(std::rethrow_exception(run.error),
                         doctest::Contains("expected every rank to build rank 0's graph, found another on rank 1"),
                         ValueError);
  }
}

TEST_CASE("across thread ranks: a run across ranks refuses an inbox of the caller's") {
  Graph g;
  g.put("a", uint64_t{1});
  const Key none[] = {Key("a")};
  const auto runs = get_on_ranks(1, g, "a", {.inbox = std::make_shared<Inbox>(none)});
  REQUIRE(runs[0].error != nullptr);
  CHECK_THROWS_WITH_AS(std::rethrow_exception(runs[0].error),
                       "get: a run across ranks (communicator) makes its own inbox; found one in GetOptions::inbox",
                       ValueError);
}

TEST_CASE("across::get without a communicator is refused, naming what it needs") {
  Graph g;
  g.put("a", uint64_t{1});
  CHECK_THROWS_WITH_AS(across::get(g, "a", {}),
                       "across::get: a run across ranks needs GetOptions::communicator; found none", ValueError);
  CHECK_THROWS_WITH_AS(across::get_sync(Plan(g, Keys("a")), {}),
                       "across::get: a run across ranks needs GetOptions::communicator; found none", ValueError);
}

// Every entry point reaches the run across ranks: across's get_sync and its
// Plan forms, and tessera::get with GetOptions::communicator set (the callers
// that have not moved to across::get). ("x", 1) is rank 1's: rank 0 receives it.
//   ("x", 0)  ("x", 1)
//        \      /
//         total
TEST_CASE("across thread ranks: get_sync, the Plan forms and tessera::get with a communicator agree") {
  Graph g;
  for (int64_t i = 0; i < 2; ++i) g.task(Key("x", {i}), [i] { return uint64_t(10 + i); });
  g.task(
      "total", [](uint64_t a, uint64_t b) { return a + b; }, ref(Key("x", {0})), ref(Key("x", {1})));
  const std::vector<std::function<Result(const GetOptions&)>> entries = {
      [&](const GetOptions& o) { return across::get_sync(g, "total", o); },
      [&](const GetOptions& o) { return across::get(Plan(g, Keys("total")), o); },
      [&](const GetOptions& o) { return across::get_sync(Plan(g, Keys("total")), o); },
      [&](const GetOptions& o) { return tessera::get(g, "total", o); },
      [&](const GetOptions& o) { return tessera::get_sync(g, "total", o); },
  };
  for (size_t e = 0; e < entries.size(); ++e) {
    CAPTURE(e);
    const auto comms = thread_communicators(2);
    std::vector<std::optional<Result>> results(2);
    std::vector<RunStats> stats(2);
    std::vector<std::thread> threads;
    for (size_t r = 0; r < 2; ++r) {
      threads.emplace_back([&, r] { results[r] = entries[e]({.stats = &stats[r], .communicator = comms[r]}); });
    }
    for (auto& t : threads) t.join();
    CHECK(results[0]->as<uint64_t>() == 21);
    CHECK_FALSE(results[1]->value().has_value());  // the result goes to rank 0 only
    CHECK(stats[0].messages_received == 1);
  }
}

}  // namespace across_test
