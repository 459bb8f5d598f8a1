// bench/overhead/phases.cpp — one phase of bench_overhead on one DAG, for an
// instruction count under callgrind (bench/overhead/phases.sh runs it):
//
//   valgrind --tool=callgrind --instr-atstart=no overhead_phases PHASE DAG
//
// PHASE: build (the Graph), plan (cull + order), run1 / run2 (get on a built
// Plan, 1 or 2 workers), lim1 / lim2 (the same with a memory limit never
// reached), e2e1 / e2e2 (all three). DAG: tree_sum, chains or stencil, the
// sizes bench_overhead measures. A first round warms the heap as the bench's
// repeats do; only the second is counted, and what it made is destroyed after
// the count stops (the bench's timers stop before that too). Instruction
// counts are the same from run to run where wall time on a shared machine is
// not; with two workers the count depends on how the threads met.
#include <cstdio>
#include <optional>
#include <stdexcept>
#include <string>

#include <valgrind/callgrind.h>

#include "dags.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tb = tessera::bench;
using namespace tessera;

int main(int argc, char** argv) try {
  if (argc != 3) throw std::invalid_argument("usage: overhead_phases PHASE DAG");
  const std::string phase = argv[1], dag = argv[2];
  const tb::DagShape shape = dag == "tree_sum" ? tb::tree_sum_shape(100000)
                             : dag == "chains" ? tb::chains_shape(1000, 100)
                             : dag == "stencil" ? tb::stencil_shape(300, 300)
                                                : throw std::invalid_argument("DAG: tree_sum, chains or stencil, not " + dag);
  const Graph g = tb::build_graph(shape);
  const std::vector<Key> outputs = tb::output_keys(shape);
  const Plan plan(g, Keys(outputs));
  const int workers = phase.back() == '2' ? 2 : 1;
  size_t made = 0;
  for (int round = 0; round < 2; ++round) {
    std::optional<Graph> g2;
    std::optional<Plan> p2;
    std::optional<Result> r;
    auto run = [&](const Plan& p, size_t limit) {
      GetOptions o;
      o.num_workers = workers;
      o.memory_limit = limit;
      r.emplace(get(p, o));
    };
    if (round == 1) CALLGRIND_START_INSTRUMENTATION;
    if (phase == "build") g2.emplace(tb::build_graph(shape));
    else if (phase == "plan") p2.emplace(g, Keys(outputs));
    else if (phase == "run1" || phase == "run2") run(plan, 0);
    else if (phase == "lim1" || phase == "lim2") run(plan, size_t{1} << 40);
    else if (phase == "e2e1" || phase == "e2e2") {
      g2.emplace(tb::build_graph(shape));
      p2.emplace(*g2, Keys(outputs));
      run(*p2, 0);
    } else {
      throw std::invalid_argument("PHASE: build, plan, run1, run2, lim1, lim2, e2e1 or e2e2, not " + phase);
    }
    if (round == 1) CALLGRIND_STOP_INSTRUMENTATION;
    made += (g2 ? g2->size() : 0) + (p2 ? p2->size() : 0) + (r ? r->size() : 0);
  }
  std::printf("%s %s: %zu\n", phase.c_str(), dag.c_str(), made);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "overhead_phases: %s\n", e.what());
  return 2;
}
