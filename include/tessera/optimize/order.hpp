// tessera/optimize/order.hpp — static priorities for running a graph with little memory.
//
// `order` gives every node a priority (0 runs first) in the spirit of dask's
// dask/order.py. The schedulers break ties among ready tasks with it.
//
// @code
//   std::vector<uint32_t> prio = tessera::order(g);   // prio[id], a permutation of 0..n-1
// @endcode
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"

namespace tessera {

//! Priority of each node: index = compiled id, value = rank (0 runs first); a
//! permutation of 0..n-1 that respects dependencies.
std::vector<uint32_t> order(const Graph& g);
//! The same, reusing a compiled form of `g`.
std::vector<uint32_t> order(const Graph& g, const CompiledGraph& c);

}  // namespace tessera
