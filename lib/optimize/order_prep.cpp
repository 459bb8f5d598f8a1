// Preparation for order(): which nodes order() sees, and the statistics of its
// sort key. See order_detail.hpp.
#include <algorithm>
#include <limits>

#include <absl/container/flat_hash_map.h>
#include <absl/hash/hash.h>

#include "order_detail.hpp"

namespace tessera::detail {

OrderGraph make_order_graph(const Graph& g, const CompiledGraph& c) {
  OrderGraph og;
  og.n = c.size();
  og.removed.assign(og.n, 0);
  // A literal read by several tasks is data embedded in those tasks, not
  // something to schedule; leaving it in would make it a root that ties
  // unrelated parts of the graph together.
  for (uint32_t i = 0; i < og.n; ++i) {
    og.removed[i] = g.node(i).is_literal() && c.dependencies(i).empty() && c.dependents(i).size() > 1;
  }
  og.deps.offsets.reserve(og.n + 1);
  og.deps.ids.reserve(c.num_edges());
  og.data_offsets.assign(og.n + 1, 0);
  for (uint32_t i = 0; i < og.n; ++i) {
    for (uint32_t d : c.dependencies(i)) {
      if (og.removed[d]) {
        og.data_ids.push_back(d);
      } else {
        og.deps.ids.push_back(d);
      }
    }
    og.deps.offsets.push_back(static_cast<uint32_t>(og.deps.ids.size()));
    og.data_offsets[i + 1] = static_cast<uint32_t>(og.data_ids.size());
  }
  og.dents.offsets.reserve(og.n + 1);
  og.dents.ids.reserve(og.deps.ids.size());
  for (uint32_t i = 0; i < og.n; ++i) {
    if (!og.removed[i]) {
      for (uint32_t d : c.dependents(i)) og.dents.ids.push_back(d);
    }
    og.dents.offsets.push_back(static_cast<uint32_t>(og.dents.ids.size()));
  }
  return og;
}

namespace {

struct VectorHash {
  size_t operator()(const std::vector<uint32_t>& v) const { return absl::HashOf(v); }
};

// The union of the children's sets, sharing an existing set whenever the
// union equals one (dense graphs end up with a handful of distinct sets).
IdSet merge_sets(absl::Span<const IdSet> parts,
                 absl::flat_hash_map<std::vector<uint32_t>, IdSet, VectorHash>& dedup) {
  const IdSet& first = parts[0];
  bool all_in_first = true;
  for (size_t i = 1; i < parts.size() && all_in_first; ++i) {
    all_in_first = std::includes(first->begin(), first->end(), parts[i]->begin(), parts[i]->end());
  }
  if (all_in_first) return first;
  std::vector<uint32_t> merged;
  for (const IdSet& p : parts) merged.insert(merged.end(), p->begin(), p->end());
  std::sort(merged.begin(), merged.end());
  merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  auto [it, inserted] = dedup.try_emplace(merged, nullptr);
  if (inserted) it->second = std::make_shared<const std::vector<uint32_t>>(std::move(merged));
  return it->second;
}

}  // namespace

Connected connecting_to_roots(const OrderGraph& og, const Csr& deps, const Csr& dents) {
  Connected out;
  out.sets.resize(og.n);
  out.max_dependents.assign(og.n, 0);
  std::vector<uint32_t> num_needed(og.n), stack, roots;
  for (uint32_t i = 0; i < og.n; ++i) num_needed[i] = static_cast<uint32_t>(deps[i].size());
  for (uint32_t i = 0; i < og.n; ++i) {
    if (og.removed[i] || !deps[i].empty()) continue;
    roots.push_back(i);
    out.sets[i] = std::make_shared<const std::vector<uint32_t>>(1, i);
    out.max_dependents[i] = static_cast<uint32_t>(dents[i].size());
    for (uint32_t child : dents[i]) {
      if (--num_needed[child] == 0) stack.push_back(child);
    }
  }
  absl::flat_hash_map<std::vector<uint32_t>, IdSet, VectorHash> dedup;
  std::vector<IdSet> parts;
  while (!stack.empty()) {
    const uint32_t key = stack.back();
    stack.pop_back();
    for (uint32_t parent : dents[key]) {
      if (--num_needed[parent] == 0) stack.push_back(parent);
    }
    parts.clear();
    uint32_t max_dep = 0;
    for (uint32_t child : deps[key]) {
      const IdSet& s = out.sets[child];
      if (std::find(parts.begin(), parts.end(), s) == parts.end()) {
        parts.push_back(s);
        max_dep = std::max(max_dep, out.max_dependents[child]);
      }
    }
    out.max_dependents[key] = max_dep;
    out.sets[key] = parts.size() == 1 ? parts[0] : merge_sets(parts, dedup);
  }
  auto empty = std::make_shared<const std::vector<uint32_t>>();
  for (uint32_t r : roots) out.sets[r] = empty;
  for (uint32_t i = 0; i < og.n; ++i) {
    if (!out.sets[i]) out.sets[i] = empty;  // removed literals
  }
  return out;
}

std::vector<uint64_t> total_dependencies(const OrderGraph& og) {
  constexpr uint64_t cap = std::numeric_limits<uint64_t>::max() / 2;
  std::vector<uint64_t> total(og.n, 0);
  std::vector<uint32_t> num_needed(og.n), stack;
  for (uint32_t i = 0; i < og.n; ++i) {
    num_needed[i] = static_cast<uint32_t>(og.deps[i].size());
    if (num_needed[i] == 0 && !og.removed[i]) stack.push_back(i);
  }
  while (!stack.empty()) {
    const uint32_t key = stack.back();
    stack.pop_back();
    uint64_t t = 1;
    for (uint32_t child : og.deps[key]) t = std::min(cap, t + total[child]);
    total[key] = t;
    for (uint32_t parent : og.dents[key]) {
      if (--num_needed[parent] == 0) stack.push_back(parent);
    }
  }
  return total;
}

}  // namespace tessera::detail
