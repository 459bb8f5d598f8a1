// tessera/graph/compiled.hpp — a graph's structure as dense integer ids.
//
// Hot paths (ordering, scheduling) work on ids, not keys: node i of the Graph is
// id i, and the edges are stored twice in CSR form (compressed sparse rows of
// 32-bit ids), once as dependencies and once as dependents. Building it checks
// that every dependency is a key of the graph.
//
// @code
//   tessera::CompiledGraph c = tessera::compile(g);
//   for (uint32_t d : c.dependencies(*g.index_of("w"))) std::cout << g.key(d);
// @endcode
//
// Thread-safe: immutable once built.
#pragma once

#include <cstdint>
#include <vector>

#include <absl/types/span.h>

#include "tessera/graph/graph.hpp"

namespace tessera {

class CompiledGraph {
 public:
  //! Number of nodes (ids are 0..size()-1).
  uint32_t size() const { return static_cast<uint32_t>(dep_offsets_.size() - 1); }
  //! Ids that node i reads, in the order of the task's dependencies().
  absl::Span<const uint32_t> dependencies(uint32_t i) const {
    return {deps_.data() + dep_offsets_[i], dep_offsets_[i + 1] - dep_offsets_[i]};
  }
  //! Ids of the nodes that read node i, ascending.
  absl::Span<const uint32_t> dependents(uint32_t i) const {
    return {dependents_.data() + dependent_offsets_[i],
            dependent_offsets_[i + 1] - dependent_offsets_[i]};
  }
  size_t num_edges() const { return deps_.size(); }

  //! Builds from explicit CSR arrays (offsets have size()+1 entries).
  CompiledGraph(std::vector<uint32_t> dep_offsets, std::vector<uint32_t> deps);

 private:
  std::vector<uint32_t> dep_offsets_, deps_;
  std::vector<uint32_t> dependent_offsets_, dependents_;
};

//! The compiled form of `g`. Throws MissingKeyError naming the task whose
//! dependency is not a key of the graph.
CompiledGraph compile(const Graph& g);

}  // namespace tessera
