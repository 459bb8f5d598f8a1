#include "tessera/graph/compiled.hpp"

#include "tessera/graph/error.hpp"

namespace tessera {

CompiledGraph::CompiledGraph(std::vector<uint32_t> dep_offsets, std::vector<uint32_t> deps)
    : dep_offsets_(std::move(dep_offsets)), deps_(std::move(deps)) {
  const uint32_t n = size();
  // Counting sort of the edges by dependency gives dependents in ascending order.
  dependent_offsets_.assign(n + 1, 0);
  for (uint32_t d : deps_) ++dependent_offsets_[d + 1];
  for (uint32_t i = 0; i < n; ++i) dependent_offsets_[i + 1] += dependent_offsets_[i];
  dependents_.resize(deps_.size());
  std::vector<uint32_t> fill(dependent_offsets_.begin(), dependent_offsets_.end() - 1);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t d : dependencies(i)) dependents_[fill[d]++] = i;
  }
}

CompiledGraph compile(const Graph& g) {
  const uint32_t n = static_cast<uint32_t>(g.size());
  std::vector<uint32_t> offsets(n + 1, 0);
  std::vector<uint32_t> deps;
  deps.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (const Key& k : g.dependencies(i)) {
      auto d = g.index_of(k);
      if (!d) throw MissingKeyError(k, g.key(i));
      deps.push_back(*d);
    }
    offsets[i + 1] = static_cast<uint32_t>(deps.size());
  }
  return CompiledGraph(std::move(offsets), std::move(deps));
}

}  // namespace tessera
