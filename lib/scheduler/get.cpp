// The two entry points differ only in who works: the caller alone, or the
// caller plus num_workers - 1 loops spawned into a task_arena. A spawned loop
// that starts after the run is over returns at once, so a run never waits for a
// thread to join it — which is why a task may call get itself without deadlock.
#include "tessera/scheduler/get.hpp"

#include <absl/strings/str_cat.h>
#include <oneapi/tbb/info.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>

#include "run.hpp"
#include "tessera/graph/error.hpp"

namespace tessera {
namespace {

template <class Launch>
Result run_plan(const Plan& plan, const GetOptions& options, int num_workers, Launch&& launch) {
  detail::Run run(plan, options, num_workers);
  if (run.start()) launch(run);
  return run.finish();
}

int resolve_workers(int n) {
  if (n < 0) throw Error(absl::StrCat("num_workers must be 0 (all hardware threads) or more, found ", n));
  return n == 0 ? tbb::info::default_concurrency() : n;
}

}  // namespace

Result get_sync(const Plan& plan, const GetOptions& options) {
  return run_plan(plan, options, 1, [](detail::Run& run) { run.work(0); });
}

Result get_sync(const Graph& g, const Keys& keys, const GetOptions& options) {
  return get_sync(Plan(g, keys, options.cache), options);
}

Result get(const Plan& plan, const GetOptions& options) {
  const int n = resolve_workers(options.num_workers);
  if (n == 1) return get_sync(plan, options);
  return run_plan(plan, options, n, [n](detail::Run& run) {
    tbb::task_arena arena(n);
    arena.execute([&] {
      tbb::task_group workers;
      for (int i = 1; i < n; ++i) workers.run([&run, i] { run.work(i); });
      run.work(0);
      workers.wait();
    });
  });
}

Result get(const Graph& g, const Keys& keys, const GetOptions& options) {
  return get(Plan(g, keys, options.cache), options);
}

}  // namespace tessera
