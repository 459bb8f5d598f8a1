// bench_scale — cost per edge of each step on the two shapes that expose
// quadratic loops: a fan-in (one task reading N tasks) and an alias chain (N
// aliases, each naming the one before, ending at a literal, read by one task).
//
//   scripts/bench scale                 (N = 10^6 for both)
//   build/bench/bench_scale --fan-in N --chain N
//
// Each step is timed on its own: build (the Graph, the fan-in's N-input Task
// included), compile (keys to dense ids), cull (cull_ids from the output),
// order, Plan (from the compiled, ordered graph) and run (get, 2 workers), in
// CPU time. A step that is linear shows the same ns per edge at every N.
#include <ctime>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/plan.hpp"

namespace {

using namespace tessera;
// Process CPU time, not wall time: the machines this runs on are shared, and a
// step's CPU time is what grows with its cost (run adds its two workers' time).
struct Clock {
  using time_point = double;
  static double now() {
    timespec ts{};
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
    return double(ts.tv_sec) + 1e-9 * double(ts.tv_nsec);
  }
};

int64_t one(int64_t i) { return i & 1; }
int64_t total(std::span<const Value> in) {
  int64_t s = 0;
  for (const Value& v : in) s += v.as<int64_t>();
  return s;
}
int64_t same(int64_t x) { return x; }

double since(Clock::time_point& t0) {
  const double now = Clock::now();
  const double s = now - t0;
  t0 = now;
  return s;
}

struct Steps {
  double build = 0, compile = 0, cull = 0, order = 0, plan = 0, run = 0;
};

// Everything after build, on `g` with output `out`; checks the result.
Steps measure(const Graph& g, const Key& out, int64_t expected, Clock::time_point t0, double build) {
  Steps s;
  s.build = build;
  const CompiledGraph c = compile(g);
  s.compile = since(t0);
  const CulledIds culled = cull_ids(g, c, {*g.index_of(out)});
  s.cull = since(t0);
  const std::vector<uint32_t> prio = order(g, c);
  s.order = since(t0);
  const Plan plan(g, c, prio, Keys(out));
  s.plan = since(t0);
  GetOptions opts;
  opts.num_workers = 2;
  const int64_t got = get(plan, opts).as<int64_t>();
  s.run = since(t0);
  if (got != expected || culled.nodes.empty()) {
    throw std::runtime_error("wrong result " + std::to_string(got) + ", expected " + std::to_string(expected));
  }
  return s;
}

Steps fan_in(uint32_t n) {
  auto t0 = Clock::now();
  Graph g;
  g.reserve(n + 1);
  std::vector<Arg> args;
  args.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    const Key k("leaf", {int64_t{i}});
    g.task(k, one, int64_t{i});
    args.emplace_back(ref(k));
  }
  g.put("total", Task::from_args(fn("total", total), std::move(args)));
  const double build = since(t0);
  return measure(g, "total", n / 2, t0, build);
}

Steps alias_chain(uint32_t n) {
  auto t0 = Clock::now();
  Graph g;
  g.reserve(n + 2);
  g.put(Key("link", {0}), int64_t{7});
  for (uint32_t i = 1; i <= n; ++i) g.alias(Key("link", {int64_t{i}}), Key("link", {int64_t{i} - 1}));
  g.task("end", same, ref(Key("link", {int64_t{n}})));
  const double build = since(t0);
  return measure(g, "end", 7, t0, build);
}

void row(const char* shape, uint32_t n, const Steps& s) {
  const double per = 1e9 / n;  // ns per edge: each shape has n + 1 edges
  std::printf("| %-11s | %9u | %7.1f | %7.1f | %7.1f | %7.1f | %7.1f | %7.1f | %8.2f |\n", shape, n,
              s.build * per, s.compile * per, s.cull * per, s.order * per, s.plan * per, s.run * per,
              s.build + s.compile + s.cull + s.order + s.plan + s.run);
}

}  // namespace

int main(int argc, char** argv) try {
  uint32_t fan = 1'000'000, chain = 1'000'000;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    const uint32_t v = static_cast<uint32_t>(std::stoul(argv[++i]));
    if (a == "--fan-in") fan = v;
    else if (a == "--chain") chain = v;
    else throw std::invalid_argument("unknown option " + a + " (expected --fan-in N or --chain N)");
  }
  std::printf("| CPU ns per edge | edges | build | compile | cull | order | Plan | run (2 workers) | total CPU s |\n");
  std::printf("|-------------|-----------|---------|---------|---------|---------|---------|---------|----------|\n");
  if (chain > 0) row("alias chain", chain, alias_chain(chain));
  if (fan > 0) row("fan-in", fan, fan_in(fan));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_scale: %s\n", e.what());
  return 1;
}
