// TEMPORARY (not for commit): serial evaluation until the scheduler lands.
#include "overhead_tessera.hpp"
#include <chrono>
#include "tessera/graph/compiled.hpp"
namespace tessera::bench {
static double eval(const Graph& g, const std::vector<Key>& outs, int64_t& sum) {
  auto t0 = std::chrono::steady_clock::now();
  auto c = compile(g);
  std::vector<Value> v(g.size());
  for (uint32_t i = 0; i < g.size(); ++i) {
    auto d = c.dependencies(i);
    v[i] = g.node(i).task().run([&](size_t k) -> const Value& { return v[d[k]]; });
  }
  sum = 0;
  for (auto& k : outs) sum += v[*g.index_of(k)].as<int64_t>();
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}
TesseraRunner::TesseraRunner(const DagShape& s, int w) : shape_(s), workers_(w), graph_(build_graph(s)), outputs_(output_keys(s)) {}
double TesseraRunner::run() { return eval(graph_, outputs_, checksum_); }
double TesseraRunner::end_to_end() { auto t0 = std::chrono::steady_clock::now(); Graph g = build_graph(shape_); double b = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count(); return b + eval(g, outputs_, checksum_); }
}
