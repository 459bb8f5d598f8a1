// Polling before sleeping, and the gate that turns it off on a busy machine.
//
// Why poll at all: on a VM, a thread woken on another vCPU while that vCPU is
// halted waits for the hypervisor to resume it, far longer than a wake within
// one vCPU. Threads that poll with sched_yield keep their vCPU
// running and give it up at once to any thread of theirs that has work, so a
// request reaches a polling engine without a wake-up at all (bench/spmd
// prints no-op apply with polling and with sleeping engines).
//
// Why the gate: a yielding thread is still runnable, and a CPU-bound process of
// someone else then runs a whole time slice before the poller sees its request
// (beside one busy process, ungated polling engines answer an order of magnitude
// slower than sleeping ones). A yield that takes longer than kSlowYield is
// the sign: someone else held the CPU. The poller then closes the gate, and every
// engine of the cluster sleeps when idle, for a back-off that doubles while the
// machine stays busy, and the busy process keeps its CPU.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <limits>
#include <thread>

namespace tessera::spmd::detail {

using PollClock = std::chrono::steady_clock;

//! A yield that takes longer than this means another process held the CPU for a
//! time slice (milliseconds). Not less: with many more polling engines than
//! CPUs a yield passes through all the pollers of its CPU, and a threshold of a
//! fraction of a millisecond closes the gate on the engines alone, which slows
//! a no-op apply to 100 engines down.
inline constexpr std::chrono::microseconds kSlowYield{1000};

enum class PollResult { ready, expired, contended };

//! Calls `ready()` between sched_yield calls for up to `window`. Returns ready as
//! soon as it holds, contended when a yield took longer than kSlowYield, expired
//! when the window has passed.
template <class Ready>
PollResult poll_yielding(Ready ready, std::chrono::microseconds window) {
  PollClock::time_point now = PollClock::now();
  const PollClock::time_point until = now + window;
  for (;;) {
    if (ready()) return PollResult::ready;
    if (now >= until) return PollResult::expired;
    std::this_thread::yield();
    PollClock::time_point before = now;
    now = PollClock::now();
    if (now - before > kSlowYield) return ready() ? PollResult::ready : PollResult::contended;
  }
}

//! Whether idle engines may poll. A poller that saw a slow yield reports it
//! with close(); the gate closes for a back-off once a second stall, distinct
//! from the first, follows it within kConfirm. The back-off doubles (kMinBackoff
//! up to kMaxBackoff) while closings keep coming and starts again at kMinBackoff
//! after a quiet spell twice as long as the last back-off. Races between
//! engines only blur the back-off, which is a heuristic anyway.
//!
//! Why a lone stall does not close it: a vCPU that the hypervisor deschedules
//! for a moment, or one burst of some daemon, stalls every poller of that CPU at
//! once and then is gone; closing on it, with a back-off that only shrank after
//! seconds of calm, kept the gate shut most of the time on a machine that was
//! quiet but for such blips, and every apply then woke 100 sleeping engines one
//! by one (0.5-1 ms instead of well under 0.1 ms). A busy process beside the
//! engines stalls them again and again, a time slice apart, and still closes
//! the gate within a few milliseconds.
class PollGate {
 public:
  static constexpr std::chrono::milliseconds kMinBackoff{10};
  static constexpr std::chrono::milliseconds kMaxBackoff{1280};
  //! Reports within this of the first stall's are that same stall (all the
  //! pollers of one CPU see it at once).
  static constexpr std::chrono::microseconds kSameStall{2 * kSlowYield};
  //! A second stall this soon after the first closes the gate.
  static constexpr std::chrono::milliseconds kConfirm{100};

  bool open(PollClock::time_point now) const {
    return now.time_since_epoch().count() >= closed_until_.load(std::memory_order_relaxed);
  }

  //! A poller saw a yield slower than kSlowYield at `now`.
  void close(PollClock::time_point now) {
    const PollClock::rep t = now.time_since_epoch().count();
    const PollClock::rep since = t - first_stall_.load(std::memory_order_relaxed);
    if (since >= 0 && since < ticks(kSameStall)) return;  // the stall another poller reported
    if (since < 0 || since >= ticks(kConfirm)) {          // a stall alone, so far
      first_stall_.store(t, std::memory_order_relaxed);
      return;
    }
    first_stall_.store(kLongAgo, std::memory_order_relaxed);  // the next closing needs two stalls again
    PollClock::rep backoff = backoff_.load(std::memory_order_relaxed);
    if (t - closed_until_.load(std::memory_order_relaxed) > 2 * backoff) backoff = ticks(kMinBackoff);
    closed_until_.store(t + backoff, std::memory_order_relaxed);
    backoff_.store(std::min(2 * backoff, ticks(kMaxBackoff)), std::memory_order_relaxed);
  }

 private:
  template <class D>
  static PollClock::rep ticks(D d) {
    return std::chrono::duration_cast<PollClock::duration>(d).count();
  }

  std::atomic<PollClock::rep> closed_until_{0};
  std::atomic<PollClock::rep> backoff_{ticks(kMinBackoff)};
  static constexpr PollClock::rep kLongAgo = std::numeric_limits<PollClock::rep>::min() / 2;
  // The stall that the next report would confirm (kLongAgo: none).
  std::atomic<PollClock::rep> first_stall_{kLongAgo};
};

}  // namespace tessera::spmd::detail
