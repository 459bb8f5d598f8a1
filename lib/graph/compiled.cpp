#include "tessera/graph/compiled.hpp"

#include "tessera/graph/error.hpp"

namespace tessera {

Csr Csr::transpose(uint32_t columns) const {
  Csr out;
  out.offsets.assign(size_t{columns} + 1, 0);
  for (uint32_t j : ids) ++out.offsets[j + 1];
  for (uint32_t j = 0; j < columns; ++j) out.offsets[j + 1] += out.offsets[j];
  out.ids.resize(ids.size());
  std::vector<uint32_t> fill(out.offsets.begin(), out.offsets.end() - 1);
  for (uint32_t i = 0; i < rows(); ++i) {
    for (uint32_t j : (*this)[i]) out.ids[fill[j]++] = i;
  }
  return out;
}

CompiledGraph::CompiledGraph(Csr deps) : deps_(std::move(deps)), dependents_(deps_.transpose(deps_.rows())) {}

CompiledGraph::CompiledGraph(std::vector<uint32_t> dep_offsets, std::vector<uint32_t> deps)
    : CompiledGraph(Csr{std::move(dep_offsets), std::move(deps)}) {}

CompiledGraph compile(const Graph& g) {
  const uint32_t n = static_cast<uint32_t>(g.size());
  Csr deps;
  deps.offsets.reserve(size_t{n} + 1);
  deps.ids.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    for (const Key& k : g.dependencies(i)) {
      auto d = g.index_of(k);
      if (!d) throw MissingKeyError(k, g.key(i));
      deps.ids.push_back(*d);
    }
    deps.end_row();
  }
  return CompiledGraph(std::move(deps));
}

}  // namespace tessera
