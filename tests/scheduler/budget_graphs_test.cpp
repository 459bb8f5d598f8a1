// dask's graphs (tests/data/graphs, synthetic results of the recorded sizes)
// under a memory limit of half the bytes an unbounded get_sync holds at most:
// every graph finishes, spilling, within the limit plus one result per worker.
// Where one task alone needs more than that (its inputs and its result), no
// schedule can keep it, so the limit is that task's need instead.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include "base/sanitizers.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/scheduler/get.hpp"
#include "testing.hpp"

using namespace tessera;

namespace {
// One worker runs on the caller's thread alone: ThreadSanitizer has nothing to
// look at there, and this test is its slowest in the scheduler suite.
#if TESSERA_TSAN
constexpr int kBudgetGraphWorkers[] = {2};
#else
constexpr int kBudgetGraphWorkers[] = {1, 2};
#endif
}  // namespace

TEST_CASE("dask's graphs finish under a memory limit of half their unbounded peak") {
  const char* root = std::getenv("TESSERA_SOURCE_ROOT");
  REQUIRE_MESSAGE(root != nullptr, "TESSERA_SOURCE_ROOT is not set (run through meson test)");
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(root) / "tests/data/graphs")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  REQUIRE(files.size() >= 8);
  std::sort(files.begin(), files.end());
  std::printf("%-22s %12s %12s %12s %8s %14s %14s %10s\n", "graph", "unbounded", "half", "limit", "workers",
              "peak held", "spilled", "spills");
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    const GraphFile f = load_graph_file(path.string());
    const Plan plan(f.graph, Keys(f.outputs));
    std::vector<size_t> bytes(plan.num_tasks());
    for (uint32_t t = 0; t < plan.num_tasks(); ++t) bytes[t] = f.nbytes[plan.graph_id(t)];
    const size_t most = testing::most_needed(plan, bytes);
    const size_t largest = *std::max_element(bytes.begin(), bytes.end());
    RunStats unbounded;
    get_sync(plan, {.stats = &unbounded});
    const size_t limit = std::max(unbounded.peak_held_bytes / 2, most);
    for (int workers : kBudgetGraphWorkers) {
      CAPTURE(workers);
      RunStats stats;
      get(plan, {.num_workers = workers, .stats = &stats, .memory_limit = limit});
      CHECK(stats.tasks_run == plan.num_tasks());
      std::printf("%-22s %12zu %12zu %12zu %8d %14zu %14zu %10zu\n", path.stem().string().c_str(),
                  unbounded.peak_held_bytes, unbounded.peak_held_bytes / 2, limit, workers, stats.peak_held_bytes,
                  stats.spilled_bytes, stats.spill_count);
      CHECK(stats.peak_held_bytes <= limit + static_cast<size_t>(workers) * largest);
      if (limit < unbounded.peak_held_bytes) CHECK(stats.spill_count > 0);
    }
  }
}
