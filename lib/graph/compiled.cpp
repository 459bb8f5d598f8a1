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
  // Graphs are mostly built a layer at a time, so a task's dependency is
  // often the node after the one the previous dependency found (a chain's
  // link, a reduction's pair, a stencil's neighbours), or after the one the
  // node before read in the same place (a stencil's first neighbour): a
  // Key comparison or two find it without hashing the key and probing the index.
  auto is = [&](uint32_t id, const Key& k) { return id < n && g.key(id) == k; };
  // The node after the one the node before read in this place, if it read one.
  auto beside_previous = [&]() -> uint32_t {
    const size_t rows = deps.offsets.size() - 1, place = deps.ids.size() - deps.offsets[rows];
    if (rows == 0 || deps.offsets[rows - 1] + place >= deps.offsets[rows]) return n;
    return deps.ids[deps.offsets[rows - 1] + place] + 1;
  };
  uint32_t guess = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (const Key& k : g.dependencies(i)) {
      uint32_t d = guess;
      if (!is(d, k) && !is(d = beside_previous(), k)) {
        auto found = g.index_of(k);
        if (!found) throw MissingKeyError(k, g.key(i));
        d = *found;
      }
      deps.ids.push_back(d);
      guess = d + 1;
    }
    deps.end_row();
  }
  return CompiledGraph(std::move(deps));
}

}  // namespace tessera
