// Scale of the graph algorithms: build, cull and order of graphs shaped like a
// dask.array computation, at 10^4, 10^5 and 10^6 tasks, printed as time per
// task of CPU time (the cost is linear when the figure stays flat as the graph
// grows), with the wall time beside it.
//
// Shape, per group of 64 blocks (213 tasks), like `(f(g(x))).sum()` on a
// chunked array: 64 roots (random blocks) -> f -> g -> tree reduction 64 -> 16
// -> 4 -> 1 (fan-in 4); the groups' partial sums reduce with fan-in 8 to one
// key. One extra task per group that nothing requests gives cull work to do.
//
// The same graph is built, culled and ordered by dask in the same run
// (bench/peers/order_peer.py, with $TESSERA_PYTHON or /usr/bin/python3), and
// the ratios dask/tessera of CPU time are printed below each line.
//
// Then order() on each graph of tests/data/graphs (dask's own graphs, most of
// them a few hundred to a few thousand tasks, where the fixed part of order's
// look-ahead budgets weighs most): CPU time per call, best of five, and the
// results get_sync holds with it beside dask's.
//
//   build/bench/bench_optimize                 (all three sizes, with dask)
//   build/bench/bench_optimize 100000          (one size)
//   build/bench/bench_optimize --no-peer       (tessera alone)
//   build/bench/bench_optimize --graphs-only   (only the graph files)
#include <algorithm>
#include <chrono>
#include <ctime>
#include <filesystem>
#include <optional>
#include <utility>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"

using namespace tessera;

namespace {

int unit(std::span<const Value>) { return 0; }

void put(Graph& g, Key key, std::vector<Key> deps) {
  std::vector<Arg> args;
  args.reserve(deps.size());
  for (Key& d : deps) args.emplace_back(ref(std::move(d)));
  g.put(key, Task::from_args(fn("f", unit), std::move(args)));
}

// Reduces `level` with fan-in `fan` under the name `name` until one key is left.
Key reduce(Graph& g, std::vector<Key> level, int64_t group, const std::string& name, size_t fan) {
  int64_t depth = 0;
  while (level.size() > 1) {
    std::vector<Key> next;
    for (size_t i = 0; i < level.size(); i += fan) {
      std::vector<Key> deps(level.begin() + static_cast<std::ptrdiff_t>(i),
                            level.begin() + static_cast<std::ptrdiff_t>(std::min(level.size(), i + fan)));
      Key k(name, {group, depth, static_cast<int64_t>(next.size())});
      put(g, k, std::move(deps));
      next.push_back(std::move(k));
    }
    level = std::move(next);
    ++depth;
  }
  return level[0];
}

Graph build(size_t target_tasks, Key& output) {
  constexpr int64_t kBlocks = 64;
  const int64_t groups = std::max<int64_t>(1, static_cast<int64_t>(target_tasks) / 214);
  Graph g;
  g.reserve(target_tasks + 1024);
  std::vector<Key> partials;
  for (int64_t grp = 0; grp < groups; ++grp) {
    std::vector<Key> level;
    for (int64_t b = 0; b < kBlocks; ++b) {
      Key x("random", {grp, b}), fx("f", {grp, b}), gx("g", {grp, b});
      put(g, x, {});
      put(g, fx, {x});
      put(g, gx, {fx});
      level.push_back(gx);
    }
    put(g, Key("unused", {grp}), {Key("f", {grp, 0})});
    partials.push_back(reduce(g, std::move(level), grp, "sum-partial", 4));
  }
  output = reduce(g, std::move(partials), -1, "sum-aggregate", 8);
  return g;
}

// CPU time of this process: the machines this runs on are often shared, and
// wall time then mostly measures the neighbours.
double cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

struct Timer {
  std::chrono::steady_clock::time_point wall = std::chrono::steady_clock::now();
  double cpu = cpu_seconds();
  std::pair<double, double> elapsed() const {
    return {cpu_seconds() - cpu,
            std::chrono::duration<double>(std::chrono::steady_clock::now() - wall).count()};
  }
};

struct Cpu {
  double build, cull, order;
};

// dask's CPU seconds for the same graph, or nothing when the peer cannot run.
std::optional<Cpu> run_peer(size_t n) {
  const char* python = std::getenv("TESSERA_PYTHON");
  const std::string cmd = std::string(python ? python : "/usr/bin/python3") + " " + TESSERA_SOURCE_ROOT +
                          "/bench/peers/order_peer.py " + std::to_string(n) + " 2>/dev/null";
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return std::nullopt;
  size_t tasks = 0;
  Cpu c{};
  const int got = std::fscanf(p, "%zu %lf %lf %lf", &tasks, &c.build, &c.cull, &c.order);
  if (pclose(p) != 0 || got != 4) return std::nullopt;
  return c;
}

void run(size_t n, bool peer) {
  Key out("none");
  Timer t;
  Graph g = build(n, out);
  const auto t_build = t.elapsed();
  t = Timer();
  Graph culled = cull(g, {out});
  const auto t_cull = t.elapsed();
  t = Timer();
  std::vector<uint32_t> prio = order(culled);
  const auto t_order = t.elapsed();
  const CompiledGraph c = compile(culled);
  const double per = 1e9 / static_cast<double>(g.size());
  auto show = [&](const char* what, std::pair<double, double> cpu_wall) {
    std::printf("  %s %7.0f ns/task (cpu %6.3f s, wall %6.3f s)", what, cpu_wall.first * per, cpu_wall.first,
                cpu_wall.second);
  };
  std::printf("%8zu tasks", g.size());
  show("build", t_build);
  show("cull", t_cull);
  show("order", t_order);
  std::printf("  order pressure %u\n", order_pressure(c, prio));
  if (!peer) return;
  if (auto d = run_peer(n)) {
    std::printf("%14s dask/tessera CPU time: build %.1fx  cull %.1fx  order %.1fx\n", "", d->build / t_build.first,
                d->cull / t_cull.first, d->order / t_order.first);
  } else {
    std::printf("%14s (dask peer unavailable)\n", "");
  }
}

// order() on every file of tests/data/graphs, culled to its outputs as the
// schedulers order it.
void run_graph_files() {
  std::vector<std::filesystem::path> files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(TESSERA_SOURCE_ROOT) /
                                                          "tests/data/graphs")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  std::printf("\norder() on tests/data/graphs (CPU time per call, best of 5)\n");
  std::printf("%-22s %6s %10s %14s %14s\n", "graph", "tasks", "order us", "dask sync_held", "ours sync_held");
  double total = 0;
  for (const auto& path : files) {
    const GraphFile f = load_graph_file(path.string());
    const Graph culled = cull(f.graph, f.outputs);
    const CompiledGraph c = compile(culled);
    double best = 1e30;
    std::vector<uint32_t> prio;
    for (int rep = 0; rep < 5; ++rep) {
      Timer t;
      prio = order(culled, c);
      best = std::min(best, t.elapsed().first);
    }
    total += best;
    const std::string dask = f.reference && f.reference->sync_max_held
                                 ? std::to_string(*f.reference->sync_max_held)
                                 : std::string("-");
    std::printf("%-22s %6zu %10.0f %14s %14u\n", path.stem().string().c_str(), culled.size(), best * 1e6,
                dask.c_str(), sync_pressure(culled, c, prio, f.outputs));
  }
  std::printf("%-22s %6s %10.0f\n", "total", "", total * 1e6);
}

}  // namespace

int main(int argc, char** argv) {
  bool peer = true, sized = true;
  std::vector<size_t> sizes;
  for (int i = 1; i < argc; ++i) {
    if (std::string(argv[i]) == "--no-peer") {
      peer = false;
    } else if (std::string(argv[i]) == "--graphs-only") {
      sized = false;
    } else {
      sizes.push_back(static_cast<size_t>(std::atol(argv[i])));
    }
  }
  if (sizes.empty()) sizes = {10'000, 100'000, 1'000'000};
  if (sized) {
    for (size_t n : sizes) run(n, peer);
  }
  run_graph_files();
  return 0;
}
