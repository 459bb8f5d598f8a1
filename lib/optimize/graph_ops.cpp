#include "tessera/optimize/graph_ops.hpp"

#include <algorithm>

#include <absl/container/flat_hash_set.h>

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

namespace {

class Culler {
 public:
  Culler(const Graph& g, const CompiledGraph& c, std::span<const uint8_t> known) : g_(g), c_(c), known_(known) {
    out_.target.assign(c.size(), CulledIds::kUnneeded);
  }

  CulledIds run(std::span<const uint32_t> roots) {
    for (uint32_t r : roots) out_.roots.push_back(visit(r));
    // Depth-first; stops at literals and known values.
    size_t needed = 0;
    while (!stack_.empty()) {
      const uint32_t id = stack_.back();
      stack_.pop_back();
      ++needed;
      if (is_known(id) || !g_.node(id).is_task()) continue;
      for (uint32_t d : c_.dependencies(id)) visit(d);
    }
    // Both lists ascending, read off `target` in one pass (already as long as
    // the graph) rather than sorted: a needed node is its own target, a
    // followed alias points elsewhere (an alias that led to itself was a cycle).
    out_.nodes.reserve(needed);
    for (uint32_t i = 0; i < c_.size(); ++i) {
      const uint32_t t = out_.target[i];
      if (t == CulledIds::kUnneeded) continue;
      (t == i ? out_.nodes : out_.aliases).push_back(i);
    }
    return std::move(out_);
  }

 private:
  bool is_known(uint32_t id) const { return !known_.empty() && known_[id] != 0; }
  bool is_alias(uint32_t id) const { return !is_known(id) && g_.node(id).is_alias(); }

  // Marks `id` needed; returns the node it stands for.
  uint32_t visit(uint32_t id) {
    const uint32_t t = resolve(id);
    if (out_.target[t] == CulledIds::kUnneeded) {
      out_.target[t] = t;
      stack_.push_back(t);
    }
    return t;
  }

  // The end of `id`'s alias chain. Each alias is walked once: later lookups
  // stop at the first alias already resolved.
  uint32_t resolve(uint32_t id) {
    chain_.clear();
    uint32_t at = id;
    while (is_alias(at) && out_.target[at] == CulledIds::kUnneeded) {
      if (on_chain_.empty()) on_chain_.assign(c_.size(), 0);
      if (on_chain_[at]) throw_alias_cycle(at);
      on_chain_[at] = 1;
      chain_.push_back(at);
      at = c_.dependencies(at)[0];
    }
    const uint32_t t = is_alias(at) ? out_.target[at] : at;
    for (uint32_t a : chain_) {
      out_.target[a] = t;
      on_chain_[a] = 0;
    }
    return t;
  }

  [[noreturn]] void throw_alias_cycle(uint32_t again) const {
    std::vector<Key> cycle;
    auto from = std::find(chain_.begin(), chain_.end(), again);
    for (auto it = from; it != chain_.end(); ++it) cycle.push_back(g_.key(*it));
    cycle.push_back(g_.key(again));
    throw CycleError(std::move(cycle));
  }

  const Graph& g_;
  const CompiledGraph& c_;
  std::span<const uint8_t> known_;
  CulledIds out_;
  std::vector<uint32_t> stack_, chain_;
  std::vector<uint8_t> on_chain_;
};

// The nodes `ids` of `g`, in `g`'s insertion order.
Graph subgraph(const Graph& g, std::vector<uint32_t> ids) {
  std::sort(ids.begin(), ids.end());
  Graph out;
  out.reserve(ids.size());
  for (uint32_t i : ids) out.set(g.key(i), g.node(i));
  return out;
}

}  // namespace

CulledIds cull_ids(const Graph& g, const CompiledGraph& c, std::span<const uint32_t> roots,
                   std::span<const uint8_t> known) {
  return Culler(g, c, known).run(roots);
}

Graph cull(const Graph& g, std::span<const Key> keys) {
  std::vector<uint32_t> roots;
  for (const Key& k : keys) {
    auto i = g.index_of(k);
    if (!i) throw MissingKeyError(k, std::nullopt);
    roots.push_back(*i);
  }
  const CompiledGraph c = compile(g);
  const CulledIds culled = cull_ids(g, c, roots);
  std::vector<uint32_t> keep = culled.nodes;
  keep.insert(keep.end(), culled.aliases.begin(), culled.aliases.end());
  return subgraph(g, std::move(keep));
}

Graph cull_one(const Graph& g, const CompiledGraph& c, uint32_t root) {
  // A walk over what `root` needs only (a set, not a mark per id of `g`).
  absl::flat_hash_set<uint32_t> seen{root};
  std::vector<uint32_t> stack{root};
  while (!stack.empty()) {
    const uint32_t i = stack.back();
    stack.pop_back();
    for (uint32_t d : c.dependencies(i)) {
      if (seen.insert(d).second) stack.push_back(d);
    }
  }
  return subgraph(g, std::vector<uint32_t>(seen.begin(), seen.end()));
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
