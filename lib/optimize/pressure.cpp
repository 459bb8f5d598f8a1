// order_pressure: dask.order.diagnostics' memory pressure of a static order.
#include <algorithm>
#include <stdexcept>
#include <string>

#include "tessera/graph/error.hpp"
#include "tessera/optimize/order.hpp"

namespace tessera {

uint32_t order_pressure(const CompiledGraph& c, std::span<const uint32_t> priorities) {
  const uint32_t n = c.size();
  if (priorities.size() != n) {
    throw ValueError("order_pressure: expected one priority per node (" + std::to_string(n) +
                                "), found " + std::to_string(priorities.size()));
  }
  std::vector<uint32_t> by_rank(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (priorities[i] >= n) throw ValueError("order_pressure: priorities are not a permutation");
    by_rank[priorities[i]] = i;
  }
  std::vector<uint32_t> waiting(n);
  for (uint32_t i = 0; i < n; ++i) waiting[i] = static_cast<uint32_t>(c.dependents(i).size());
  int64_t held = 0, worst = 0;
  for (uint32_t node : by_rank) {
    worst = std::max(worst, held);
    int64_t released = 0;
    for (uint32_t d : c.dependencies(node)) released += (--waiting[d] == 0);
    held -= released;
    if (!c.dependents(node).empty()) ++held;
  }
  return static_cast<uint32_t>(worst);
}

uint32_t order_pressure(const Graph& g, std::span<const uint32_t> priorities) {
  return order_pressure(compile(g), priorities);
}

}  // namespace tessera
