// bench/overhead/dags.hpp — the three DAGs of the overhead benchmark, built once
// and handed to every runner (tessera, oneTBB flow_graph, dask).
//
// A DagShape is the structure only: keys, dependencies as CSR ids, outputs. Each
// runner turns it into its own graph, so all of them run exactly the same DAG:
//   (a) tree_sum: N independent tiny tasks feeding a binary-tree sum;
//   (b) chains:   C chains of L tasks each;
//   (c) stencil:  R rows x C columns, each task reading three tasks of the row
//                 before (columns j-1, j, j+1, wrapping around at the edges).
// Every task is tiny: a task with no dependency is inc(i) of a literal, one with
// k dependencies combines them (inc, add, mean3 for k = 1, 2, 3; the mean keeps
// the stencil's values bounded). A task with no dependency gets its node id.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <span>

#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"

namespace tessera::bench {

struct DagShape {
  std::string name;         //!< short name: tree_sum, chains, stencil
  std::string description;  //!< one line for the table
  std::vector<Key> keys;    //!< node i's key
  std::vector<uint32_t> dep_offsets{0}, deps;  //!< CSR: node i reads deps[off[i]..off[i+1])
  std::vector<uint32_t> outputs;               //!< the requested nodes

  uint32_t size() const { return static_cast<uint32_t>(keys.size()); }
  std::span<const uint32_t> dependencies(uint32_t i) const {
    return {deps.data() + dep_offsets[i], dep_offsets[i + 1] - dep_offsets[i]};
  }
  //! Appends a node reading `ds`; returns its id.
  uint32_t add(Key key, std::initializer_list<uint32_t> ds);
};

DagShape tree_sum_shape(uint32_t leaves);
DagShape chains_shape(uint32_t chains, uint32_t length);
DagShape stencil_shape(uint32_t rows, uint32_t cols);

//! The tessera Graph of `shape`: typed tiny tasks (see the file comment).
Graph build_graph(const DagShape& shape);
//! The requested keys of `shape`.
std::vector<Key> output_keys(const DagShape& shape);
//! Writes `shape` as a tessera-graph/1 file, for the dask peer.
void write_graph_file(const DagShape& shape, const std::string& path);

}  // namespace tessera::bench
