// The two entry points differ only in who works: the caller alone, or the
// caller plus num_workers - 1 loops spawned into a task_arena. A spawned loop
// that starts after the run is over returns at once, so a run never waits for a
// thread to join it, and its wait is isolated from other runs' tasks — which is
// why a task may call get itself without deadlock.
#include "tessera/scheduler/get.hpp"

#include <algorithm>
#include <atomic>
#include <memory>
#include <thread>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "across_hook.hpp"
#include "run.hpp"
#include "base/sanitizers.hpp"
#include "tessera/graph/error.hpp"

#if TESSERA_TSAN
#include <sanitizer/tsan_interface.h>
#endif

namespace tessera {
namespace {

// One spawned worker. ThreadSanitizer cannot see oneTBB hand a task to a thread
// (libtbb is not instrumented), so the hand-off is made visible to it: each copy
// of the closure releases its own address once built and the worker acquires it
// before reading the closure; then the worker waits for `launched`, which the
// caller sets once every task is spawned, so the caller's writes into TBB's task
// objects are ordered before TBB's own reads of them when the task ends. The
// wait is the time the caller takes to spawn n - 1 tasks.
class WorkerLoop {
 public:
  WorkerLoop(detail::Run& run, int id, const std::atomic<bool>& launched)
      : run_(&run), id_(id), launched_(&launched) {
    published();
  }
  WorkerLoop(const WorkerLoop& o) : run_(o.run_), id_(o.id_), launched_(o.launched_) { published(); }
  WorkerLoop& operator=(const WorkerLoop&) = delete;
  void operator()() const {
#if TESSERA_TSAN
    __tsan_acquire(const_cast<WorkerLoop*>(this));
#endif
    while (!launched_->load(std::memory_order_acquire)) std::this_thread::yield();
    run_->work(id_);
  }

 private:
  void published() {
#if TESSERA_TSAN
    __tsan_release(this);
#endif
  }
  detail::Run* run_;
  int id_;
  const std::atomic<bool>* launched_;
};

template <class Launch>
Result run_plan(const Plan& plan, const GetOptions& options, int num_workers, Launch&& launch) {
  detail::Run run(plan, options, num_workers);
  if (run.start()) launch(run);
  return run.finish();
}

// TBB caps the threads of all arenas together (by default at the hardware
// threads; tbb::global_control raises or lowers it); asking an arena for more
// only prints a warning, so a run takes the cap into account itself.
int resolve_workers(int n) {
  if (n < 0) throw Error(absl::StrCat("num_workers must be 0 (all hardware threads) or more, found ", n));
  const auto cap = tbb::global_control::active_value(tbb::global_control::max_allowed_parallelism);
  return static_cast<int>(std::min<size_t>(n == 0 ? tbb::info::default_concurrency() : n, cap));
}

// One arena per calling thread and worker count, made on first use and kept:
// making and dropping an arena costs a run its threads' joining and leaving,
// far more than the run of a small graph. Per thread, so that the caller always finds its own slot
// free and joins (with a shared arena, a second caller's run would be handed to
// a TBB thread instead); a task that calls get finds its thread already in the
// arena, and its run's waits are isolated from the outer run's tasks.
tbb::task_arena& arena_for(int n) {
  thread_local absl::flat_hash_map<int, std::unique_ptr<tbb::task_arena>> arenas;
  std::unique_ptr<tbb::task_arena>& a = arenas[n];
  if (a == nullptr) {
    a = std::make_unique<tbb::task_arena>(n);
    a->initialize();
  }
  return *a;
}

}  // namespace

Result get_sync(const Plan& plan, const GetOptions& options) {
  if (options.communicator) return detail::across_runner().plan(plan, options, /*sync=*/true);
  return run_plan(plan, options, 1, [](detail::Run& run) { run.work(0); });
}

// A Plan prepares independent parts at once on the arena it is built in: the
// run's own, so that preparing uses no more threads than running.
// The keys an inbox delivers, for the Plan.
std::span<const Key> inbox_keys(const GetOptions& options) {
  if (options.inbox == nullptr) return {};
  return options.inbox->keys();
}

Result get_sync(const Graph& g, const Keys& keys, const GetOptions& options) {
  if (options.communicator) return detail::across_runner().graph(g, keys, options, /*sync=*/true);
  return get_sync(arena_for(1).execute([&] { return Plan(g, keys, options.cache, inbox_keys(options)); }), options);
}

Result get(const Plan& plan, const GetOptions& options) {
  if (options.communicator) return detail::across_runner().plan(plan, options, /*sync=*/false);
  const int n = resolve_workers(options.num_workers);
  if (n == 1) return get_sync(plan, options);
  return run_plan(plan, options, n, [n](detail::Run& run) {
    arena_for(n).execute([&] {
      // Isolated, so that waiting for this run's loops never picks up a task of
      // another run sharing the arena (an outer run's loop, when a task of it
      // called get): that loop would not return until the outer run ended.
      tbb::this_task_arena::isolate([&] {
        tbb::task_group workers;
        std::atomic<bool> launched{false};
        for (int i = 1; i < n; ++i) workers.run(WorkerLoop(run, i, launched));
        launched.store(true, std::memory_order_release);
        run.work(0);
        workers.wait();
      });
    });
  });
}

Result get(const Graph& g, const Keys& keys, const GetOptions& options) {
  if (options.communicator) return detail::across_runner().graph(g, keys, options, /*sync=*/false);
  const int n = resolve_workers(options.num_workers);
  return get(arena_for(n).execute([&] { return Plan(g, keys, options.cache, inbox_keys(options)); }), options);
}

namespace detail {
namespace {
std::atomic<const AcrossRunner*> installed_runner{nullptr};
}  // namespace

void set_across_runner(AcrossRunner runner) {
  static AcrossRunner kept;  // one runner for the process: installed once, read by every run after
  kept = runner;
  installed_runner.store(&kept, std::memory_order_release);
}

const AcrossRunner& across_runner() {
  const AcrossRunner* r = installed_runner.load(std::memory_order_acquire);
  if (r == nullptr) {
    throw Error("get: GetOptions::communicator is set, but the run across ranks (lib/across) is not linked in");
  }
  return *r;
}
}  // namespace detail

}  // namespace tessera
