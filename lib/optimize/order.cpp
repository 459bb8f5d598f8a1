// PLACEHOLDER until the dask-style order lands: a depth-first topological order.
#include "tessera/optimize/order.hpp"

namespace tessera {

std::vector<uint32_t> order(const Graph& g) { return order(g, compile(g)); }

std::vector<uint32_t> order(const Graph&, const CompiledGraph& c) {
  const uint32_t n = c.size();
  std::vector<uint32_t> prio(n, UINT32_MAX);
  std::vector<uint32_t> stack;
  std::vector<uint8_t> expanded(n, 0);
  uint32_t next = 0;
  for (uint32_t root = 0; root < n; ++root) {
    stack.push_back(root);
    while (!stack.empty()) {
      uint32_t t = stack.back();
      if (prio[t] != UINT32_MAX) { stack.pop_back(); continue; }
      if (!expanded[t]) {
        expanded[t] = 1;
        for (uint32_t d : c.dependencies(t)) if (prio[d] == UINT32_MAX) stack.push_back(d);
      } else {
        prio[t] = next++;
        stack.pop_back();
      }
    }
  }
  return prio;
}

}  // namespace tessera
