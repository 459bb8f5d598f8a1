// tessera::spmd side of `scripts/bench spmd` (bench/spmd/run.sh): no-op apply
// latency to 8 and 100 engines, and the MD5 tutorial end to end on 100 engines.
// bench/peers/spmd_ipyparallel.py measures the same with ipyparallel.
//
// The MD5 folder comes from TESSERA_BENCH_MD5_FOLDER (the peer hashes the same
// files); without it the program makes 500 random 1 KiB files of its own.
#include <benchmark/benchmark.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <filesystem>
#include <memory>
#include <stdexcept>
#include <string>

#include "spmd_md5.hpp"
#include "tessera/spmd/spmd.hpp"

namespace spmd = tessera::spmd;

namespace {

void noop() {}

// One apply of a function doing nothing, to every engine, waiting for all.
void BM_noop_apply(benchmark::State& state) {
  spmd::Cluster cluster(static_cast<int>(state.range(0)));
  auto view = cluster.broadcast_view();
  for (auto _ : state) view.apply(noop).get();
}
BENCHMARK(BM_noop_apply)->Arg(8)->Arg(100)->Unit(benchmark::kMicrosecond)->UseRealTime();

using Clock = std::chrono::steady_clock;

// The median of per-call times in microseconds, as the counter "median_us".
void report_median(benchmark::State& state, std::vector<double>& us) {
  if (us.empty()) return;
  std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
  state.counters["median_us"] = us[us.size() / 2];
}

// The same apply, each call timed: the median per call, which the means above
// blur with the rare call that meets a busy machine (bench/spmd/smoke.sh
// checks it against BM_wake_round_trip of the same run).
void BM_noop_apply_each(benchmark::State& state) {
  spmd::Cluster cluster(static_cast<int>(state.range(0)));
  auto view = cluster.broadcast_view();
  std::vector<double> us;
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    view.apply(noop).get();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  report_median(state, us);
}
BENCHMARK(BM_noop_apply_each)->Arg(100)->Unit(benchmark::kMicrosecond)->UseRealTime();

// The scale the apply is measured against: one plain thread, asleep on a
// condition variable, woken by the caller and waking it back. A figure of
// this machine at this moment, without tessera's code.
void BM_wake_round_trip(benchmark::State& state) {
  std::mutex mu;
  std::condition_variable cv;
  uint64_t sent = 0, answered = 0;
  bool stop = false;
  std::thread peer([&] {
    std::unique_lock lock(mu);
    for (;;) {
      cv.wait(lock, [&] { return stop || sent != answered; });
      if (stop) return;
      answered = sent;
      cv.notify_all();
    }
  });
  std::vector<double> us;
  for (auto _ : state) {
    const Clock::time_point t0 = Clock::now();
    std::unique_lock lock(mu);
    ++sent;
    cv.notify_all();
    cv.wait(lock, [&] { return answered == sent; });
    lock.unlock();
    us.push_back(std::chrono::duration<double, std::micro>(Clock::now() - t0).count());
  }
  {
    std::lock_guard lock(mu);
    stop = true;
  }
  cv.notify_all();
  peer.join();
  report_median(state, us);
}
BENCHMARK(BM_wake_round_trip)->Unit(benchmark::kMicrosecond)->UseRealTime();

std::string md5_folder() {
  static std::string folder = [] {
    if (const char* f = std::getenv("TESSERA_BENCH_MD5_FOLDER")) return std::string(f);
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-md5-bench-XXXXXX").string();
    if (mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
    spmd_md5::make_random_files(tmpl, 500, 1024);
    return tmpl;
  }();
  return folder;
}

// The tutorial end to end on a running cluster: scatter the ranks, apply the
// SPMD function, gather and flatten the digests.
void BM_md5_end_to_end(benchmark::State& state) {
  std::string folder = md5_folder();
  std::vector<std::string> plain = spmd_md5::md5_sequential(folder);
  spmd::Cluster cluster(static_cast<int>(state.range(0)));
  auto view = cluster.broadcast_view();
  for (auto _ : state) {
    view.scatter("rank", cluster.ids(), /*flatten=*/true);
    auto ar = view.apply(spmd_md5::spmd_task, folder, spmd::Reference("rank"), cluster.size());
    std::vector<std::string> sums = spmd::flatten(ar.get());
    if (sums != plain) state.SkipWithError("the engines' digests differ from the plain loop's");
  }
}
BENCHMARK(BM_md5_end_to_end)->Arg(100)->Unit(benchmark::kMillisecond)->UseRealTime();

// The plain loop, for scale.
void BM_md5_plain_loop(benchmark::State& state) {
  std::string folder = md5_folder();
  for (auto _ : state) benchmark::DoNotOptimize(spmd_md5::md5_sequential(folder));
}
BENCHMARK(BM_md5_plain_loop)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace

BENCHMARK_MAIN();
