// Runs with an Inbox (GetOptions::inbox): keys whose values another thread
// delivers while the run goes on. Random DAGs with a random subset of keys
// delivered in random order, with random delays, give the serial evaluation's
// results at every worker count; a run waiting on a delivery sleeps (little CPU)
// and neither ends nor reports a cycle; fail() and a cancellation end a waiting
// run promptly with everything released; under a memory limit delivered values
// spill and come back intact, and a result waiting to be sent to another rank
// is not spilled (a task that needs its room waits for the send); bad use is a
// ValueError that says what was wrong.
#include <doctest/doctest.h>

#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <future>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <sys/resource.h>
#include <unistd.h>

#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/inbox.hpp"
#include "testing.hpp"

namespace inbox_test {

using namespace tessera;
using tessera::testing::Counted;
using tessera::testing::RandomDag;
using namespace std::chrono_literals;

namespace {

int inc(int x) { return x + 1; }
int add(int a, int b) { return a + b; }

Result run(const Plan& plan, int workers, GetOptions opts) {
  opts.num_workers = workers;
  return workers == 0 ? get_sync(plan, opts) : get(plan, opts);
}

std::shared_ptr<Inbox> make_inbox(std::initializer_list<Key> keys) {
  const std::vector<Key> k(keys);
  return std::make_shared<Inbox>(k);
}

// CPU time of the whole process, in seconds (every thread, user and system).
double process_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) * 1e-6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

// A random DAG's tasks: a random subset of them is delivered, in random order,
// from a thread that sleeps a random while before each (a few deliveries come
// before the run starts). The values delivered are the serial evaluation's, so
// the run's results must be the same as computing everything.
struct Deliveries {
  std::vector<Key> keys;
  std::vector<Value> values;

  Deliveries(const RandomDag& d, uint32_t seed, double share, std::function<Value(uint32_t)> make) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> u01(0, 1);
    std::vector<uint32_t> chosen;
    for (uint32_t i = 0; i < d.literal.size(); ++i) {
      if (!d.literal[i] && u01(rng) < share) chosen.push_back(i);
    }
    std::shuffle(chosen.begin(), chosen.end(), rng);
    for (uint32_t i : chosen) {
      keys.push_back(Key("n", {i}));
      values.push_back(make(i));
    }
  }

  // Delivers values[0, before) at once, the rest from a thread with random
  // pauses of up to `pause_us` microseconds.
  std::thread start(Inbox& inbox, size_t before, uint32_t seed, int pause_us) const {
    for (size_t j = 0; j < std::min(before, keys.size()); ++j) inbox.deliver(keys[j], values[j]);
    return std::thread([this, &inbox, before, seed, pause_us] {
      std::mt19937 rng(seed);
      for (size_t j = before; j < keys.size(); ++j) {
        if (pause_us > 0) std::this_thread::sleep_for(std::chrono::microseconds(rng() % pause_us));
        inbox.deliver(keys[j], values[j]);
      }
    });
  }
};

}  // namespace

TEST_CASE("inbox: a value delivered before the run is taken, its reader runs, and a requested inbox key is returned") {
  //   remote (delivered)   y = inc(remote)   w = add(y, remote)
  Graph g;
  g.put("remote", 0);  // a placeholder: never used
  g.task("y", inc, ref("remote"));
  g.task("w", add, ref("y"), ref("remote"));
  for (int workers : {0, 1, 3}) {
    CAPTURE(workers);
    auto inbox = make_inbox({Key("remote")});
    inbox->deliver("remote", Value(41));
    CHECK(inbox->pending() == 0);
    Plan plan(g, Keys(std::vector<Keys>{Keys("w"), Keys("remote")}), {}, inbox->keys());
    RunStats stats;
    const Result r = run(plan, workers, {.stats = &stats, .inbox = inbox});
    CHECK(r.items()[0].value().as<int>() == 83);
    CHECK(r.items()[1].value().as<int>() == 41);
    CHECK(stats.tasks == 3);  // the inbox key counts as one of the run's tasks
    CHECK(stats.tasks_run == 3);
  }
}

TEST_CASE("inbox: the task at an inbox key is not run, nor what only it read; pre/posttask skip it") {
  //   a (throws if run) -> remote (a task over a; delivered instead) -> y
  std::atomic<int> ran_a{0};
  Graph g;
  g.task("a", fn("a", [&ran_a]() -> int {
           ++ran_a;
           throw std::runtime_error("a must not run");
         }));
  g.task("remote", inc, ref("a"));
  g.task("y", inc, ref("remote"));
  std::vector<std::string> pre, post;
  Callbacks cb;
  cb.pretask = [&pre](const RunState& s, uint32_t t, int) { pre.push_back(s.key(t).str()); };
  cb.posttask = [&post](const RunState& s, uint32_t t, const Value&, int) { post.push_back(s.key(t).str()); };
  size_t peak = 0;
  cb.finish = [&peak](const RunState& s, bool) { peak = s.peak_bytes(); };
  auto inbox = make_inbox({Key("remote")});
  std::thread net([&] {
    std::this_thread::sleep_for(20ms);
    inbox->deliver("remote", Value(9));
  });
  CHECK(get(g, "y", {.num_workers = 2, .callbacks = {cb}, .inbox = inbox}).as<int>() == 10);
  net.join();
  CHECK(ran_a == 0);
  CHECK(pre == std::vector<std::string>{"y"});
  CHECK(post == std::vector<std::string>{"y"});
  CHECK(peak > 0);  // the delivered value was held
}

TEST_CASE("inbox: random DAGs with a random subset delivered from a thread give the serial evaluation's results") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  uint32_t seed = 4200;
  for (uint32_t n : {2u, 7u, 40u, 300u, 2000u}) {
    for (double share : {0.05, 0.3, 1.0}) {
      ++seed;
      RandomDag d = testing::random_dag(seed, n, 0.0);
      const Deliveries del(d, seed, share, [&d](uint32_t i) {
        return Value::make<Counted>(static_cast<int64_t>(i), d.expected[i]);
      });
      std::vector<uint64_t> expected;
      for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
      const Plan plan(d.graph, d.request, {}, del.keys);
      for (int workers : {0, 1, 2, 4}) {
        CAPTURE(seed);
        CAPTURE(n);
        CAPTURE(share);
        CAPTURE(workers);
        auto inbox = std::make_shared<Inbox>(del.keys);
        std::thread net = del.start(*inbox, del.keys.size() / 5, seed * 7 + static_cast<uint32_t>(workers),
                                    n > 1000 ? 200 : 2000);
        std::vector<uint64_t> got;
        {
          const Result r = run(plan, workers, {.inbox = inbox});
          testing::flatten_values(r, got);
        }
        net.join();
        CHECK(got == expected);
        CHECK(inbox->pending() == 0);
        inbox.reset();
        // Only the test's own copies of the delivered values are left.
        CHECK(Counted::alive.load() == static_cast<long>(del.values.size()));
      }
    }
  }
}

TEST_CASE("inbox: one worker waits for a pending key without deadlock, asleep, then finishes") {
  //   remote (delivered after 300 ms) -> y; nothing else can run meanwhile
  Graph g;
  g.put("remote", 0);
  g.task("y", inc, ref("remote"));
  for (int workers : {0, 1, 4}) {
    CAPTURE(workers);
    auto inbox = make_inbox({Key("remote")});
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = process_cpu_seconds();
    std::thread net([&] {
      std::this_thread::sleep_for(300ms);
      inbox->deliver("remote", Value(1));
    });
    const GetOptions opts{.num_workers = workers, .inbox = inbox};
    const int y = workers == 0 ? get_sync(g, "y", opts).as<int>() : get(g, "y", opts).as<int>();
    net.join();
    const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    const double cpu = process_cpu_seconds() - cpu0;
    CHECK(y == 2);
    CHECK(wall >= 0.3);
    // Asleep, the run takes a few ms of CPU; a worker that spun while waiting
    // would take its share of a core for the whole wait.
    CHECK(cpu < 0.1 * wall);
  }
}

TEST_CASE("inbox: fail() ends a waiting run with the given error, everything released") {
  //   c0..c9 (computed, Counted) -> s = sum(c*, remote); remote never arrives
  for (int workers : {0, 1, 4}) {
    for (bool before : {false, true}) {
      CAPTURE(workers);
      CAPTURE(before);
      Graph g;
      std::vector<Arg> args;
      for (int i = 0; i < 10; ++i) {
        g.task(Key("c", {i}), fn("make", [i]() { return Value::make<Counted>(int64_t{i}, static_cast<uint64_t>(i)); }));
        args.emplace_back(ref(Key("c", {i})));
      }
      g.put("remote", 0);
      args.emplace_back(ref("remote"));
      g.put("s", Task::from_args(fn("sum", [](std::span<const Value>) { return 0; }), std::move(args)));
      auto inbox = make_inbox({Key("remote")});
      if (before) inbox->fail(std::make_exception_ptr(Error("rank 2 lost")));
      std::thread net([&] {
        std::this_thread::sleep_for(50ms);
        inbox->fail(std::make_exception_ptr(Error("rank 3 lost")));
      });
      const GetOptions opts{.num_workers = workers, .inbox = inbox};
      auto call = [&] { return workers == 0 ? get_sync(g, "s", opts) : get(g, "s", opts); };
      CHECK_THROWS_WITH_AS(call(), before ? "rank 2 lost" : "rank 3 lost", Error);
      net.join();
      CHECK(inbox->failed());
      CHECK(Counted::alive.load() == 0);
    }
  }
}

TEST_CASE("inbox: a cancellation ends a run waiting for a delivery") {
  Graph g;
  g.task("c", fn("make", []() { return Value::make<Counted>(int64_t{1}, uint64_t{1}); }));
  g.put("remote", 0);
  g.task("s", fn("add", [](const Counted& c, int r) { return static_cast<int>(c.v) + r; }), ref("c"), ref("remote"));
  for (int workers : {0, 1, 4}) {
    CAPTURE(workers);
    auto inbox = make_inbox({Key("remote")});
    CancellationToken stop;
    std::thread canceller([&] {
      std::this_thread::sleep_for(50ms);
      stop.cancel();
    });
    const GetOptions opts{.num_workers = workers, .cancel = stop, .inbox = inbox};
    auto call = [&] { return workers == 0 ? get_sync(g, "s", opts) : get(g, "s", opts); };
    const auto t0 = std::chrono::steady_clock::now();
    CHECK_THROWS_AS(call(), Cancelled);
    canceller.join();
    CHECK(std::chrono::steady_clock::now() - t0 < 10s);  // not a hang: the run noticed
    CHECK(Counted::alive.load() == 0);
    // A late delivery after the run: still checked, then dropped.
    inbox->deliver("remote", Value(1));
    CHECK_THROWS_WITH_AS(inbox->deliver("remote", Value(1)), "Inbox::deliver: key remote was delivered already",
                         ValueError);
  }
}

TEST_CASE("inbox: under a memory limit delivered values are held, spilled and brought back intact") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  namespace fs = std::filesystem;
  const fs::path scratch = fs::temp_directory_path() / ("tessera-inbox-test-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  uint32_t seed = 9100;
  for (uint32_t n : {300u, 1500u}) {
    ++seed;
    auto words = [seed](uint32_t i) -> size_t { return 16 + testing::mix(seed, i) % 2048; };
    RandomDag d = testing::random_dag(seed, n, 0.0, words);
    const Deliveries del(d, seed, 0.3, [&](uint32_t i) { return Value(testing::Sized::make(d.expected[i], words(i))); });
    const Plan plan(d.graph, d.request, {}, del.keys);
    std::vector<uint64_t> expected;
    for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
    RunStats unbounded;
    {
      auto inbox = std::make_shared<Inbox>(del.keys);
      for (size_t j = 0; j < del.keys.size(); ++j) inbox->deliver(del.keys[j], del.values[j]);
      get_sync(plan, {.stats = &unbounded, .inbox = inbox});
    }
    std::vector<size_t> bytes(plan.num_tasks());
    for (uint32_t t = 0; t < plan.num_tasks(); ++t) bytes[t] = 8 * words(static_cast<uint32_t>(plan.key(t).index()[0]));
    const size_t limit = std::max(testing::most_needed(plan, bytes), unbounded.peak_held_bytes / 4);
    for (int workers : {0, 1, 2, 4}) {
      CAPTURE(seed);
      CAPTURE(workers);
      auto inbox = std::make_shared<Inbox>(del.keys);
      std::thread net = del.start(*inbox, 0, seed + static_cast<uint32_t>(workers), 300);
      RunStats stats;
      std::vector<uint64_t> got;
      try {
        testing::flatten_values(run(plan, workers,
                                    {.stats = &stats, .memory_limit = limit, .scratch_dir = scratch.string(), .inbox = inbox}),
                                got);
      } catch (const std::exception& e) {
        FAIL_CHECK(std::string(e.what()));
      }
      net.join();
      CHECK(got == expected);  // Sized::checked() threw had a value come back damaged
      CHECK(stats.spill_count > 0);
      CHECK(fs::is_empty(scratch));
    }
  }
  fs::remove_all(scratch);
}

// A result's posttask hook may still run when the budget spills that result:
// a delivery taken by the other worker needs the room. The hook must see the
// value the task returned all the same (a run across ranks sends what its
// posttask hook sees: an emptied slot went out as an empty Value).
TEST_CASE("inbox: posttask sees its task's result while another worker spills it to make room") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  namespace fs = std::filesystem;
  const fs::path scratch = fs::temp_directory_path() / ("tessera-inbox-post-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  constexpr size_t kLimit = size_t{8} << 20;
  constexpr size_t kAElems = kLimit * 62 / 100 / sizeof(double), kInElems = kLimit * 30 / 100 / sizeof(double);
  Graph g;
  g.task("a", [] { return std::vector<double>(kAElems, 1.5); });
  g.put("in", 0);
  g.task("c", [](const std::vector<double>& a, const std::vector<double>& in) { return a.back() + in.back(); },
         ref("a"), ref("in"));
  const std::vector<Key> inbox_keys{Key("in")};
  const Plan plan(g, Keys(Key("c")), {}, inbox_keys);
  auto inbox = std::make_shared<Inbox>(inbox_keys);
  std::promise<void> a_done;
  std::thread net([&, ready = a_done.get_future()]() mutable {
    ready.wait();
    inbox->deliver("in", Value(std::vector<double>(kInElems, 2.0)));
  });
  bool seen_spill = false, had_value = false;
  Callbacks cb;
  cb.posttask = [&](const RunState& state, uint32_t task, const Value& result, int) {
    if (state.key(task) != Key("a")) return;
    a_done.set_value();
    // The delivery takes the room: the other worker spills "a" meanwhile.
    const auto t0 = std::chrono::steady_clock::now();
    while (state.spill_count() == 0 && std::chrono::steady_clock::now() - t0 < 10s) std::this_thread::sleep_for(1ms);
    seen_spill = state.spill_count() > 0;
    had_value = result.has_value();
  };
  RunStats stats;
  const Result r = get(plan, {.num_workers = 2, .callbacks = {cb}, .stats = &stats, .memory_limit = kLimit,
                              .scratch_dir = scratch.string(), .inbox = inbox});
  net.join();
  CHECK(seen_spill);
  CHECK(had_value);
  CHECK(r.as<double>() == 3.5);
  CHECK(fs::is_empty(scratch));
  fs::remove_all(scratch);
}

// A run across ranks hands each result for other ranks to its sender in
// posttask and, under a limit, keeps it counted until the sender says it was
// sent (Inbox::sent). Until then the sender holds it too, so writing it
// out frees nothing: the run must neither spill it nor count its bytes as
// gone. Here the next task needs the room that result takes, and nothing else
// can make it: the run waits for the send, then goes on.
//   s (62% of the limit, for another rank)    in (delivered in s's posttask) -> b (62%) -> c
TEST_CASE("inbox: a result waiting to be sent is not spilled; a task that needs its room waits for the send") {
  tbb::global_control allow(tbb::global_control::max_allowed_parallelism, 8);
  namespace fs = std::filesystem;
  const fs::path scratch = fs::temp_directory_path() / ("tessera-inbox-send-" + std::to_string(::getpid()));
  fs::create_directories(scratch);
  constexpr size_t kLimit = size_t{8} << 20, kElems = kLimit * 62 / 100 / sizeof(double);
  Graph g;
  g.task("s", [] { return std::vector<double>(kElems, 1.0); });
  g.put("in", 0);
  g.task("b", [](int in) { return std::vector<double>(kElems, 2.0 + in); }, ref("in"));
  g.task("c", [](const std::vector<double>& b) { return b.back(); }, ref("b"));
  const std::vector<Key> inbox_keys{Key("in")};
  const Plan plan(g, Keys({Key("c"), Key("s")}), {}, inbox_keys);
  for (int workers : {0, 2}) {
    CAPTURE(workers);
    auto inbox = std::make_shared<Inbox>(inbox_keys);
    inbox->set_returned(1);  // ("s") goes to another rank
    using Clock = std::chrono::steady_clock;
    Value queued;  // the sender's reference
    std::promise<void> s_done;
    Clock::time_point sent_at{}, b_started{};
    std::thread sender([&, ready = s_done.get_future()]() mutable {
      ready.wait();
      std::this_thread::sleep_for(150ms);
      queued = Value();
      sent_at = Clock::now();
      inbox->sent(1);
    });
    std::vector<Key> spilled;
    Callbacks cb;
    cb.posttask = [&](const RunState& state, uint32_t task, const Value& result, int) {
      if (state.key(task) != Key("s")) return;
      queued = result;
      inbox->deliver("in", Value(1));
      s_done.set_value();
    };
    cb.pretask = [&](const RunState& state, uint32_t task, int) {
      if (state.key(task) == Key("b")) b_started = Clock::now();
    };
    cb.spill = [&](const RunState& state, const SpillEvent& e) {
      if (e.kind == SpillEvent::Kind::spill) spilled.push_back(state.key(e.task));
    };
    RunStats stats;
    std::optional<Result> r;
    try {
      r = run(plan, workers, {.callbacks = {cb}, .stats = &stats, .memory_limit = kLimit,
                              .scratch_dir = scratch.string(), .inbox = inbox});
    } catch (const std::exception& e) {
      FAIL_CHECK(std::string(e.what()));
    }
    sender.join();
    CHECK(std::find(spilled.begin(), spilled.end(), Key("s")) == spilled.end());
    CHECK(b_started >= sent_at);
    if (r) CHECK((*r)[0].as<double>() == 3.0);
    CHECK(stats.peak_held_bytes <= kLimit);
    CHECK(fs::is_empty(scratch));
  }
  fs::remove_all(scratch);
}

TEST_CASE("inbox: bad use is a ValueError saying what was expected") {
  Graph g;
  g.put("remote", 0);
  g.task("y", inc, ref("remote"));
  SUBCASE("a key the inbox did not declare") {
    auto inbox = make_inbox({Key("remote")});
    CHECK_THROWS_WITH_AS(inbox->deliver(Key("other", {3}), Value(1)),
                         "Inbox::deliver: key ('other', 3) is not one of the inbox's 1 declared keys", ValueError);
  }
  SUBCASE("a key delivered twice") {
    auto inbox = make_inbox({Key("remote")});
    inbox->deliver("remote", Value(1));
    CHECK_THROWS_WITH_AS(inbox->deliver("remote", Value(2)), "Inbox::deliver: key remote was delivered already",
                         ValueError);
    CHECK(get_sync(g, "y", {.inbox = inbox}).as<int>() == 2);  // the first value stands
  }
  SUBCASE("a key listed twice") {
    CHECK_THROWS_WITH_AS(make_inbox({Key("remote"), Key("remote")}),
                         "Inbox: expected distinct keys, found remote twice", ValueError);
  }
  SUBCASE("a key both in the cache and in the inbox") {
    auto inbox = make_inbox({Key("remote")});
    Cache cache;
    cache.emplace("remote", Value(5));
    CHECK_THROWS_WITH_AS(get(g, "y", {.cache = cache, .inbox = inbox}),
                         "Plan: key remote is both in the cache and in the inbox; expected one source for it",
                         ValueError);
    const Plan plan(g, "y", {}, inbox->keys());
    CHECK_THROWS_WITH_AS(get(plan, {.cache = cache, .inbox = inbox}),
                         "get: key remote is both in the cache and in the inbox; expected one source for it",
                         ValueError);
  }
  SUBCASE("an inbox key that is not a key of the graph") {
    auto inbox = make_inbox({Key("nowhere")});
    CHECK_THROWS_WITH_AS(get_sync(g, "y", {.inbox = inbox}), "Plan: inbox key nowhere is not a key of the graph",
                         ValueError);
  }
  SUBCASE("a Plan not made for the inbox's keys") {
    auto inbox = make_inbox({Key("remote")});
    const Plan plain(g, "y");
    CHECK_THROWS_WITH_AS(get_sync(plain, {.inbox = inbox}),
                         "get: expected a Plan made for the inbox's 1 keys (Plan's inbox argument), found one made for 0",
                         ValueError);
    const Plan planned(g, "y", {}, inbox->keys());
    CHECK_THROWS_WITH_AS(get_sync(planned, {}),
                         "get: the Plan was made for an inbox of 1 keys (remote, ...), but GetOptions::inbox is not set",
                         ValueError);
    auto other = make_inbox({Key("y")});
    CHECK_THROWS_WITH_AS(get_sync(planned, {.inbox = other}),
                         "get: the Plan was made for inbox key remote, which GetOptions::inbox does not declare",
                         ValueError);
  }
  SUBCASE("an inbox used for a second run") {
    auto inbox = make_inbox({Key("remote")});
    inbox->deliver("remote", Value(1));
    CHECK(get_sync(g, "y", {.inbox = inbox}).as<int>() == 2);
    CHECK_THROWS_WITH_AS(get_sync(g, "y", {.inbox = inbox}),
                         "GetOptions::inbox: expected a fresh Inbox, found one that served a run already", ValueError);
  }
}

TEST_CASE("inbox: an inbox key the request does not need is accepted and dropped") {
  //   remote -> y (requested);  unused (delivered, but nothing requested needs it)
  Graph g;
  g.put("remote", 0);
  g.put("unused", 0);
  g.task("y", inc, ref("remote"));
  auto inbox = make_inbox({Key("remote"), Key("unused")});
  inbox->deliver("unused", Value::make<Counted>(int64_t{5}, uint64_t{5}));
  std::thread net([&] {
    std::this_thread::sleep_for(10ms);
    inbox->deliver("remote", Value(3));
  });
  CHECK(get(g, "y", {.num_workers = 2, .inbox = inbox}).as<int>() == 4);
  net.join();
  CHECK(Counted::alive.load() == 0);
}

// Inbox::sent is the sender's word, and a sender may say it twice: the second
// time changes nothing. ("s") is sent to another rank and read here by ("t");
// were its use dropped twice, ("t") would find it gone.
//   s (for another rank, sent twice in its posttask) -> t
TEST_CASE("inbox: a result said sent twice is released once; its local reader still reads it") {
  Graph g;
  g.task("s", [] { return 20; });
  g.task("t", inc, ref("s"));
  const std::vector<Key> no_keys;
  const Plan plan(g, Keys({Key("t"), Key("s")}), {}, no_keys);
  for (int workers : {0, 2}) {
    CAPTURE(workers);
    auto inbox = std::make_shared<Inbox>(no_keys);
    inbox->set_returned(1);  // ("s") goes to another rank
    Callbacks cb;
    cb.posttask = [&](const RunState& state, uint32_t task, const Value&, int) {
      if (state.key(task) != Key("s")) return;
      inbox->sent(1);
      inbox->sent(1);
    };
    const Result r = run(plan, workers, {.callbacks = {cb}, .memory_limit = size_t{1} << 30, .inbox = inbox});
    CHECK(r[0].as<int>() == 21);
  }
}

}  // namespace inbox_test
