// bench_spin_lock — the scheduler's lock (tbb::spin_mutex, lib/scheduler/run_ledger.hpp)
// beside the hand-written test-and-test-and-set lock it replaced and std::mutex,
// on the scheduler's critical section: a push and a pop on a shared stack.
//
//   build/bench/bench_spin_lock --benchmark_min_time=0.2
//
// Google Benchmark runs each at 1 and 2 threads; compare the rows of one run.
#include <benchmark/benchmark.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include <tbb/spin_mutex.h>

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define BENCH_CPU_RELAX() _mm_pause()
#else
#define BENCH_CPU_RELAX() std::this_thread::yield()
#endif

namespace {

// The scheduler's lock before it became tbb::spin_mutex, kept here as the peer.
class HandWrittenSpinLock {
 public:
  void lock() noexcept {
    for (int spins = 0;;) {
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
      while (locked_.load(std::memory_order_relaxed)) {
        if (++spins < 128) {
          BENCH_CPU_RELAX();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() noexcept { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

template <class Lock>
struct Shared {
  alignas(64) Lock lock;
  std::vector<uint32_t> stack = std::vector<uint32_t>(64, 1);
};

template <class Lock>
void push_pop(benchmark::State& state) {
  static Shared<Lock> shared;
  uint32_t sum = 0;
  for (auto _ : state) {
    std::lock_guard lk(shared.lock);
    shared.stack.push_back(static_cast<uint32_t>(state.iterations()));
    sum += shared.stack.back();
    shared.stack.pop_back();
  }
  benchmark::DoNotOptimize(sum);
}

BENCHMARK(push_pop<tbb::spin_mutex>)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(push_pop<HandWrittenSpinLock>)->Threads(1)->Threads(2)->UseRealTime();
BENCHMARK(push_pop<std::mutex>)->Threads(1)->Threads(2)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
