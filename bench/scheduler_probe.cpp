// A quick probe of the scheduler's run-only overhead (not the official
// comparison, which bench/ holds with dask and flow_graph side by side): n tiny
// independent tasks feeding a binary-tree sum, run from a prepared Plan with
// get_sync and get at 1 and 2 workers, and the same DAG as a oneTBB flow_graph
// of continue_nodes with empty bodies (the floor for a dynamic DAG on TBB).
// Prints µs per task, best of several runs.
//
//   build/bench/scheduler_probe [n = 100000]
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <vector>

#include "tessera/graph/compiled.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;

namespace {

long inc(long x) { return x + 1; }
long add(long a, long b) { return a + b; }

double best_seconds(int reps, const std::function<void()>& f) {
  double best = 1e30;
  for (int r = 0; r < reps; ++r) {
    auto a = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - a).count());
  }
  return best;
}

// n leaves ("x", i) = inc(i), summed pairwise level by level; returns the root.
Key tree_sum(Graph& g, long n) {
  std::vector<Key> level;
  for (long i = 0; i < n; ++i) {
    level.emplace_back("x", std::initializer_list<int64_t>{i});
    g.task(level.back(), inc, i);
  }
  for (int64_t depth = 0; level.size() > 1; ++depth) {
    std::vector<Key> next;
    for (size_t i = 0; i + 1 < level.size(); i += 2) {
      next.emplace_back("s", std::initializer_list<int64_t>{depth, static_cast<int64_t>(i / 2)});
      g.task(next.back(), add, ref(level[i]), ref(level[i + 1]));
    }
    if (level.size() % 2) next.push_back(level.back());
    level = std::move(next);
  }
  return level[0];
}

double flow_graph_seconds(const CompiledGraph& c, int threads) {
  using namespace tbb::flow;
  tbb::global_control limit(tbb::global_control::max_allowed_parallelism, threads);
  graph fg;
  std::vector<std::unique_ptr<continue_node<continue_msg>>> nodes;
  for (uint32_t i = 0; i < c.size(); ++i) {
    nodes.push_back(std::make_unique<continue_node<continue_msg>>(fg, [](const continue_msg&) {}));
  }
  for (uint32_t i = 0; i < c.size(); ++i) {
    for (uint32_t d : c.dependencies(i)) make_edge(*nodes[d], *nodes[i]);
  }
  return best_seconds(7, [&] {
    for (uint32_t i = 0; i < c.size(); ++i) {
      if (c.dependencies(i).empty()) nodes[i]->try_put(continue_msg());
    }
    fg.wait_for_all();
  });
}

}  // namespace

int main(int argc, char** argv) {
  const long n = argc > 1 ? std::atol(argv[1]) : 100000;
  Graph g;
  g.reserve(static_cast<size_t>(2 * n));
  const Key root = tree_sum(g, n);
  auto t0 = std::chrono::steady_clock::now();
  Plan plan(g, root);
  const double prepare = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double tasks = plan.num_tasks();
  std::printf("%.0f tasks; Plan (compile + cull + order + CSR): %.3f us/task\n", tasks, prepare * 1e6 / tasks);
  std::printf("get_sync:            %.3f us/task\n", best_seconds(7, [&] { get_sync(plan); }) * 1e6 / tasks);
  for (int w : {1, 2}) {
    tbb::global_control limit(tbb::global_control::max_allowed_parallelism, w);
    double s = best_seconds(7, [&] {
      if (get(plan, {.num_workers = w}).as<long>() != n * (n + 1) / 2) std::abort();
    });
    std::printf("get, %d worker(s):    %.3f us/task\n", w, s * 1e6 / tasks);
  }
  const CompiledGraph c = compile(g);
  for (int w : {1, 2}) {
    std::printf("flow_graph, %d thread(s), empty bodies: %.3f us/task\n", w, flow_graph_seconds(c, w) * 1e6 / tasks);
  }
}
