// The private polling helpers of the engines (lib/spmd/polling.hpp) and the
// ordering and waiting they must not change.
#include <doctest/doctest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <utility>
#include <vector>

#include "polling.hpp"
#include "tessera/spmd/spmd.hpp"

using namespace tessera;
using namespace tessera::spmd;
using namespace std::chrono_literals;
using tessera::spmd::detail::PollClock;
using tessera::spmd::detail::PollGate;
using tessera::spmd::detail::PollResult;

// Two stalls a few milliseconds apart, the second at `t`: what a busy process
// beside the engines does to their yields.
void busy_at(PollGate& gate, PollClock::time_point t) {
  gate.close(t - 5ms);
  gate.close(t);
}

TEST_CASE("the poll gate closes for a back-off that doubles, and starts again small after a quiet spell") {
  PollGate gate;
  PollClock::time_point t0 = PollClock::now();
  CHECK(gate.open(t0));
  busy_at(gate, t0);
  CHECK_FALSE(gate.open(t0 + PollGate::kMinBackoff - 1us));
  CHECK(gate.open(t0 + PollGate::kMinBackoff));
  // Closed again at once: twice as long.
  PollClock::time_point t1 = t0 + PollGate::kMinBackoff;
  busy_at(gate, t1);
  CHECK_FALSE(gate.open(t1 + 2 * PollGate::kMinBackoff - 1us));
  CHECK(gate.open(t1 + 2 * PollGate::kMinBackoff));
  // Never longer than kMaxBackoff.
  PollClock::time_point t = t1;
  for (int i = 0; i < 20; ++i) {
    t += 5ms;
    gate.close(t);
  }
  CHECK(gate.open(t + PollGate::kMaxBackoff));
  // A quiet spell twice the last back-off: back to the short back-off.
  PollClock::time_point later = t + 4 * PollGate::kMaxBackoff;
  busy_at(gate, later);
  CHECK_FALSE(gate.open(later + PollGate::kMinBackoff - 1us));
  CHECK(gate.open(later + PollGate::kMinBackoff));
}

// A vCPU descheduled for a moment stalls every poller of that CPU at once:
// dozens of reports of one stall, then calm. That is no busy machine, and
// polling must go on (closing the gate on it made every apply wake 100
// sleeping engines one by one).
TEST_CASE("the poll gate stays open for one stall, however many pollers report it, and closes on a second") {
  PollGate gate;
  const PollClock::time_point t0 = PollClock::now();
  for (int poller = 0; poller < 50; ++poller) gate.close(t0 + poller * 10us);
  CHECK(gate.open(t0 + 1ms));
  // Another lone stall, long after: still open.
  const PollClock::time_point t1 = t0 + 1s;  // well past PollGate::kConfirm
  gate.close(t1);
  CHECK(gate.open(t1 + 1us));
  // A second, distinct stall soon after: a busy machine.
  gate.close(t1 + 4ms);
  CHECK_FALSE(gate.open(t1 + 4ms + 1us));
}

TEST_CASE("poll_yielding returns when ready, and expires when not") {
  CHECK(spmd::detail::poll_yielding([] { return true; }, 0us) == PollResult::ready);
  auto start = PollClock::now();
  PollResult never = spmd::detail::poll_yielding([] { return false; }, 2000us);
  CHECK(never != PollResult::ready);
  // Contended (a yield took over kSlowYield) may end the poll early on a busy machine.
  if (never == PollResult::expired) CHECK(PollClock::now() - start >= 2000us);
  std::atomic<bool> flag{false};
  std::thread setter([&flag] {
    std::this_thread::sleep_for(1ms);
    flag = true;
  });
  PollResult r = PollResult::expired;
  while (r != PollResult::ready) r = spmd::detail::poll_yielding([&flag] { return flag.load(); }, 60s);
  setter.join();
  CHECK(flag.load());
}

TEST_CASE("requests from several threads reach every engine in one order, whether engines poll or sleep") {
  Cluster cluster(4);
  auto view = cluster.broadcast_view();
  view.push("log", std::vector<int>{}).get();
  auto submit = [&view](int base) {
    for (int i = 0; i < 60; ++i) {
      view.execute([tag = base + i] {
        const Context& c = context();
        std::vector<int> log = c.get<std::vector<int>>("log");
        log.push_back(tag);
        c.set("log", std::move(log));
      });
      if (i % 20 == 19) std::this_thread::sleep_for(2ms);  // the engines go to sleep
    }
  };
  std::thread other(submit, 1000);
  submit(0);
  other.join();
  std::vector<std::vector<int>> logs = view.pull<std::vector<int>>("log").get();
  REQUIRE(logs[0].size() == 120);
  for (const auto& log : logs) CHECK(log == logs[0]);
  std::vector<int> mine, theirs;
  for (int tag : logs[0]) (tag < 1000 ? mine : theirs).push_back(tag);
  for (int i = 0; i < 60; ++i) {
    CHECK(mine[i] == i);
    CHECK(theirs[i] == 1000 + i);
  }
}

TEST_CASE("waits shorter than the callers' poll window time out; longer ones than the clock holds do not") {
  Cluster cluster(2);
  std::atomic<bool> release{false};
  auto ar = cluster.broadcast_view().apply([&release] {
    while (!release.load()) std::this_thread::sleep_for(100us);
    return 1;
  });
  CHECK_FALSE(ar.wait(0s));
  CHECK_FALSE(ar.wait(1us));
  REQUIRE_THROWS_WITH_AS(ar.get(10us), "apply: result not ready after 1e-05 s (2 of 2 engines still running)",
                         TimeoutError);
  release = true;
  CHECK(ar.wait(std::chrono::duration<double>(1e15)));  // a timeout too long for the clock is forever
  CHECK(ar.get() == std::vector<int>{1, 1});
}
