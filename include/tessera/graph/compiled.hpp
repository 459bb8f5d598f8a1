// tessera/graph/compiled.hpp — a graph's structure as dense integer ids.
//
// Hot paths (ordering, scheduling) work on ids, not keys: node i of the Graph is
// id i, and the edges are stored twice in CSR form (compressed sparse rows of
// 32-bit ids, the `Csr` below), once as dependencies and once as dependents.
// Building it checks that every dependency is a key of the graph. `Csr` is the
// one adjacency type of tessera: order's working graphs and a Plan's edges are
// Csr too.
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

#include <span>

#include "tessera/graph/graph.hpp"

namespace tessera {

//! Adjacency lists in compressed sparse rows: row i is
//! ids[offsets[i] .. offsets[i + 1]). Build one row at a time with
//! `ids.push_back(...)` then `end_row()`.
struct Csr {
  //! Row i starts at offsets[i]; one more entry than rows.
  std::vector<uint32_t> offsets{0};
  //! The rows' ids, one row after another.
  std::vector<uint32_t> ids;

  //! Number of rows.
  uint32_t rows() const { return static_cast<uint32_t>(offsets.size() - 1); }
  //! Number of ids in all rows.
  size_t num_edges() const { return ids.size(); }
  //! Row i.
  std::span<const uint32_t> operator[](uint32_t i) const {
    return {ids.data() + offsets[i], offsets[i + 1] - offsets[i]};
  }
  //! Closes the row being built: the ids pushed since the last end_row().
  void end_row() { offsets.push_back(static_cast<uint32_t>(ids.size())); }
  //! The reverse adjacency over `columns` rows: row j lists every row i that
  //! lists j, ascending, once per time i lists it. Linear (a counting sort).
  Csr transpose(uint32_t columns) const;
};

//! A graph as dense ids: node i is the graph's key(i), its dependencies and dependents in CSR arrays.
class CompiledGraph {
 public:
  //! Number of nodes (ids are 0..size()-1).
  uint32_t size() const { return deps_.rows(); }
  //! Ids that node i reads, in the order of the task's dependencies().
  std::span<const uint32_t> dependencies(uint32_t i) const { return deps_[i]; }
  //! Ids of the nodes that read node i, ascending.
  std::span<const uint32_t> dependents(uint32_t i) const { return dependents_[i]; }
  //! Number of dependencies over all nodes.
  size_t num_edges() const { return deps_.num_edges(); }
  //! Both directions as CSR.
  const Csr& dependencies() const { return deps_; }
  //! Dependents as CSR.
  const Csr& dependents() const { return dependents_; }

  //! Builds from the dependencies of each node.
  explicit CompiledGraph(Csr deps);
  //! Builds from explicit CSR arrays (offsets have size()+1 entries).
  CompiledGraph(std::vector<uint32_t> dep_offsets, std::vector<uint32_t> deps);

 private:
  Csr deps_, dependents_;
};

//! The compiled form of `g`. Throws MissingKeyError naming the task whose
//! dependency is not a key of the graph.
CompiledGraph compile(const Graph& g);

}  // namespace tessera
