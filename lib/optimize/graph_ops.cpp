#include "tessera/optimize/graph_ops.hpp"

#include <algorithm>

#include "tessera/graph/error.hpp"

namespace tessera {

std::vector<Key> dependencies(const Graph& g, const Key& key) {
  auto i = g.index_of(key);
  if (!i) throw MissingKeyError(key, std::nullopt);
  auto deps = g.dependencies(*i);
  return {deps.begin(), deps.end()};
}

std::vector<Key> dependents(const Graph& g, const Key& key) {
  if (!g.contains(key)) throw MissingKeyError(key, std::nullopt);
  std::vector<Key> out;
  for (uint32_t i = 0; i < g.size(); ++i) {
    auto deps = g.dependencies(i);
    if (std::find(deps.begin(), deps.end(), key) != deps.end()) out.push_back(g.key(i));
  }
  return out;
}

Graph cull(const Graph& g, absl::Span<const Key> keys) {
  std::vector<uint8_t> needed(g.size(), 0);
  std::vector<uint32_t> stack;
  for (const Key& k : keys) {
    auto i = g.index_of(k);
    if (!i) throw MissingKeyError(k, std::nullopt);
    if (!needed[*i]) {
      needed[*i] = 1;
      stack.push_back(*i);
    }
  }
  size_t count = stack.size();
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    for (const Key& d : g.dependencies(i)) {
      auto j = g.index_of(d);
      if (!j) throw MissingKeyError(d, g.key(i));
      if (!needed[*j]) {
        needed[*j] = 1;
        ++count;
        stack.push_back(*j);
      }
    }
  }
  Graph out;
  out.reserve(count);
  for (uint32_t i = 0; i < g.size(); ++i) {
    if (needed[i]) out.set(g.key(i), g.node(i));
  }
  return out;
}

std::vector<uint32_t> find_cycle(const CompiledGraph& c) {
  // Iterative depth-first search; a dependency met while still on the stack
  // (state 1) closes a cycle.
  const uint32_t n = c.size();
  std::vector<uint8_t> state(n, 0);  // 0 new, 1 on the stack, 2 finished
  std::vector<std::pair<uint32_t, uint32_t>> stack;  // node, next dependency position
  for (uint32_t root = 0; root < n; ++root) {
    if (state[root]) continue;
    stack.emplace_back(root, 0);
    state[root] = 1;
    while (!stack.empty()) {
      auto& [node, pos] = stack.back();
      const auto deps = c.dependencies(node);
      if (pos == deps.size()) {
        state[node] = 2;
        stack.pop_back();
        continue;
      }
      const uint32_t d = deps[pos++];
      if (state[d] == 1) {
        std::vector<uint32_t> cycle;
        auto from = std::find_if(stack.begin(), stack.end(), [d](const auto& e) { return e.first == d; });
        for (auto it = from; it != stack.end(); ++it) cycle.push_back(it->first);
        cycle.push_back(d);
        // The stack runs from a task to what it reads; print in the direction
        // of the edges "a depends on b": a -> b.
        return cycle;
      }
      if (state[d] == 0) {
        state[d] = 1;
        stack.emplace_back(d, 0);
      }
    }
  }
  return {};
}

std::vector<Key> find_cycle(const Graph& g) {
  std::vector<Key> out;
  for (uint32_t i : find_cycle(compile(g))) out.push_back(g.key(i));
  return out;
}

std::vector<uint32_t> topological_order(const Graph& g, const CompiledGraph& c) {
  const uint32_t n = c.size();
  std::vector<uint32_t> waiting(n), out, ready;
  out.reserve(n);
  for (uint32_t i = n; i-- > 0;) {
    waiting[i] = static_cast<uint32_t>(c.dependencies(i).size());
    if (waiting[i] == 0) ready.push_back(i);
  }
  while (!ready.empty()) {
    const uint32_t i = ready.back();
    ready.pop_back();
    out.push_back(i);
    const auto dents = c.dependents(i);
    for (auto it = dents.rbegin(); it != dents.rend(); ++it) {
      if (--waiting[*it] == 0) ready.push_back(*it);
    }
  }
  if (out.size() != n) {
    std::vector<Key> cycle;
    for (uint32_t i : find_cycle(c)) cycle.push_back(g.key(i));
    throw CycleError(std::move(cycle));
  }
  return out;
}

std::vector<Key> toposort(const Graph& g) {
  std::vector<Key> out;
  out.reserve(g.size());
  for (uint32_t i : topological_order(g, compile(g))) out.push_back(g.key(i));
  return out;
}

}  // namespace tessera
