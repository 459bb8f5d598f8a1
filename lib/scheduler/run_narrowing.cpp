// Narrowing: worker 0 measures the run's rate and tries the other mode now
// and then; the other workers park while the run is narrow (run_narrowing.hpp).
#include "run_narrowing.hpp"

#include <algorithm>

namespace tessera::detail {

// Worker 0, every 16th task (pace): measures the run's rate in windows of 250 µs and
// now and then tries the other mode (docs/scheduler.md, "Narrowing").
void Narrowing::measure(Pace& p, uint32_t waits, const RunState& run) {
  using namespace std::chrono_literals;
  const Pace::Clock::time_point now = Pace::Clock::now();
  const auto elapsed = now - p.start;
  if (elapsed < 250us) return;
  const size_t finished = run.num_finished();
  const double seconds = std::chrono::duration<double>(elapsed).count();
  const double rate = static_cast<double>(finished - p.finished_at_start) / seconds;
  const bool long_tasks = elapsed > 20us * p.count;
  // Running alone can only win when the workers keep meeting at the lock.
  const bool contended = 4 * (waits - p.waits_at_start) >= p.count;
  p.start = now;
  p.finished_at_start = finished;
  p.waits_at_start = waits;
  p.count = 0;
  if (long_tasks) {
    if (narrow_.load(std::memory_order_relaxed)) set(false);
    p = Pace{.waits_at_start = waits, .start = now, .finished_at_start = finished};
    return;
  }
  if (p.settling) {
    p.settling = false;
    return;
  }
  if (p.probing) {
    p.probing = false;
    if (rate > 1.2 * p.rate) {
      p.rate = rate;
      p.probe_every = 2;
    } else {
      set(p.mode_before);
      p.probe_every = std::min<uint32_t>(p.probe_every * 2, 64);
      p.settling = true;
    }
    p.windows_left = p.probe_every;
    return;
  }
  p.rate = rate;
  const bool narrow = narrow_.load(std::memory_order_relaxed);
  if (!narrow && !contended) return;
  if (--p.windows_left == 0) {
    p.probing = true;
    p.mode_before = narrow;
    set(!p.mode_before);
    p.settling = true;
  }
}

void Narrowing::set(bool narrow) {
  narrow_.store(narrow, std::memory_order_relaxed);
  if (narrow) return;
  std::lock_guard g(park_mutex_);
  park_cv_.notify_all();
}

// A worker other than 0 while the run is narrow: it waits until worker 0
// widens the run, or until worker 0 finished nothing for a millisecond.
void Narrowing::park(const std::atomic<bool>& budget_on) {
  using namespace std::chrono_literals;
  std::unique_lock g(park_mutex_);
  uint64_t seen = lead_steps_.load(std::memory_order_relaxed);
  while (narrow_.load(std::memory_order_relaxed) && !budget_on.load(std::memory_order_relaxed)) {
    if (park_cv_.wait_for(g, 1ms) == std::cv_status::no_timeout) continue;
    const uint64_t steps = lead_steps_.load(std::memory_order_relaxed);
    if (steps == seen) {
      narrow_.store(false, std::memory_order_relaxed);
      park_cv_.notify_all();  // the other parked workers too
      break;
    }
    seen = steps;
  }
}

}  // namespace tessera::detail
