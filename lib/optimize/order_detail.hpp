// Private pieces of order(): the graph as order sees it and the per-node
// statistics its tie-breaking key uses. Split from order.cpp so each file holds
// one idea: this one the preparation, order.cpp the traversal.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <absl/types/span.h>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"

namespace tessera::detail {

//! A sorted set of node ids, shared by every node that has the same one.
using IdSet = std::shared_ptr<const std::vector<uint32_t>>;

//! The graph order() walks: the compiled graph without the literals that feed
//! several tasks (dask's "data roots": they are embedded in the tasks that read
//! them and get their priority just before the first of those).
struct OrderGraph {
  uint32_t n = 0;
  Csr deps, dents;
  std::vector<uint8_t> removed;         // a data root taken out of the graph
  std::vector<uint32_t> data_offsets;   // CSR: removed literals each node reads
  std::vector<uint32_t> data_ids;
};
OrderGraph make_order_graph(const Graph& g, const CompiledGraph& c);

//! For every node the number of roots it descends from (roots themselves
//! count none), and the largest number of dependents among those roots
//! (dask's `_connecting_to_roots`); the sets themselves are guaranteed only at
//! the sinks (nodes without `dents`), elsewhere they may be empty. With
//! `deps`/`dents` swapped it gives the leaves each node reaches.
struct Connected {
  std::vector<uint32_t> counts;
  std::vector<IdSet> sets;
  std::vector<uint32_t> max_dependents;
};
Connected connecting_to_roots(const OrderGraph& og, const Csr& deps, const Csr& dents);

//! Number of tasks that must run before each node, itself included, counting a
//! shared ancestor once per path (dask's `ndependencies`); saturates.
std::vector<uint64_t> total_dependencies(const OrderGraph& og);

}  // namespace tessera::detail
