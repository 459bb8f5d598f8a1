// Narrowing (docs/scheduler.md, "Narrowing (Pace)"): with tasks so short that
// the lock's hand-offs cost more than the tasks, one worker alone outruns
// several. Worker 0 measures the run's rate in windows and now and then tries
// the other mode, keeping the faster; the other workers park while the run is
// narrow. Only for runs of two workers or more without task hooks, until a
// memory limit's budget takes over (then every worker works).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <mutex>

#include "tessera/scheduler/callbacks.hpp"

namespace tessera::detail {

class Narrowing {
 public:
  //! Worker 0's measurements, its own (no other thread reads them).
  struct Pace {
    using Clock = std::chrono::steady_clock;
    uint32_t count = 0;            // worker 0's completions since the window started
    uint32_t waits_at_start = 0;   // its completions that found the lock taken, then
    Clock::time_point start;       // of the window
    size_t finished_at_start = 0;  // the run's completions then
    bool settling = true;          // the window after a change of mode is not measured
    bool probing = false;          // this window runs the other mode
    bool mode_before = false;      // narrow before the probe
    double rate = 0;               // completions per second in the current mode
    uint32_t windows_left = 2, probe_every = 2;
  };

  explicit Narrowing(bool may) : may_(may) {}

  //! Whether this run may narrow at all.
  bool may() const { return may_; }
  //! Whether the run is narrow now (workers other than 0 park).
  bool narrow() const { return narrow_.load(std::memory_order_relaxed); }
  //! Worker 0, after each task it completed: `waits`, its completions that
  //! found the lock taken so far; `run`, whose completions give the rate.
  //! Inline, for the 15 tasks in 16 that only count.
  void pace(Pace& p, uint32_t waits, const RunState& run) {
    lead_steps_.store(lead_steps_.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    if (++p.count % 16 == 0) measure(p, waits, run);
  }
  //! Narrows, or widens and wakes the parked workers.
  void set(bool narrow);
  //! A worker other than 0 while the run is narrow: returns once worker 0
  //! widened it, once worker 0 finished nothing for a millisecond, or once
  //! `budget_on` is set.
  void park(const std::atomic<bool>& budget_on);

 private:
  void measure(Pace& p, uint32_t waits, const RunState& run);

  const bool may_;
  alignas(64) std::atomic<bool> narrow_{false};
  std::atomic<uint64_t> lead_steps_{0};  // worker 0's completions, for parked workers
  std::mutex park_mutex_;
  std::condition_variable park_cv_;
};

}  // namespace tessera::detail
