// tessera/optimize/graph_ops.hpp — structure queries over a graph: dependencies,
// dependents, cull, topological order and cycles.
//
// The pure functions dask has in dask.core and dask.optimization, over tessera's
// Graph. They work on the compiled form (dense ids, CSR edges), so they stay
// linear in the size of the graph; the Key-based ones are for people.
//
// @code
//   tessera::Graph small = tessera::cull(g, {"w"});     // only what w needs
//   std::vector<tessera::Key> keys = tessera::toposort(small);
//   tessera::dependents(g, "x");                        // {z}
// @endcode
//
// Thread-safe: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <vector>

#include <span>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"

namespace tessera {

//! The keys `key` reads directly, in the task's order. Throws MissingKeyError.
std::vector<Key> dependencies(const Graph& g, const Key& key);
//! The keys that read `key` directly, in graph order. Throws MissingKeyError.
std::vector<Key> dependents(const Graph& g, const Key& key);

//! The part of `g` that `keys` need: those keys and everything they depend on,
//! in `g`'s insertion order. Throws MissingKeyError for a requested key that is
//! absent, or a dependency that is not a key (naming the task that refers to it).
Graph cull(const Graph& g, std::span<const Key> keys);
inline Graph cull(const Graph& g, std::initializer_list<Key> keys) {
  return cull(g, std::span<const Key>(keys.begin(), keys.size()));
}

//! cull(g, {g.key(root)}) for a caller that culls one graph many times (a block
//! at a time): found on `c`, the compiled form of `g`, by a walk over only what
//! `root` needs, so each call costs that part, not the whole graph. Aliases are
//! kept as they are. Throws nothing for a graph `c` was compiled from.
//! @code
//!   const tessera::CompiledGraph c = tessera::compile(g);
//!   tessera::Graph part = tessera::cull_one(g, c, *g.index_of(tessera::Key("x", {3})));
//! @endcode
Graph cull_one(const Graph& g, const CompiledGraph& c, uint32_t root);

//! What `roots` need, on the ids of `c` (the compiled form of `g`): the one
//! cull that `cull`, the schedulers' Plan and order's run model share. An alias
//! is followed to the node its chain ends at, each alias once, so alias chains
//! cost linear time; a `known` node (one per id when given: a cached value) is a
//! value, not followed, whatever it maps to. Throws CycleError for aliases that
//! refer to each other.
struct CulledIds {
  //! The id that stands for "not needed" in maps over every id.
  static constexpr uint32_t kUnneeded = UINT32_MAX;
  std::vector<uint32_t> nodes;    //!< needed ids that are not followed aliases, ascending
  std::vector<uint32_t> aliases;  //!< the aliases on the way, ascending
  std::vector<uint32_t> roots;    //!< each root, resolved through its aliases
  std::vector<uint32_t> target;   //!< per id: a needed node itself, a needed alias its chain's end; else kUnneeded
};
CulledIds cull_ids(const Graph& g, const CompiledGraph& c, std::span<const uint32_t> roots,
                   std::span<const uint8_t> known = {});
inline CulledIds cull_ids(const Graph& g, const CompiledGraph& c, std::initializer_list<uint32_t> roots,
                          std::span<const uint8_t> known = {}) {
  return cull_ids(g, c, std::span<const uint32_t>(roots.begin(), roots.size()), known);
}

//! Node ids in an order where every node comes after its dependencies (ties by
//! id). Throws CycleError printing the cycle (`a -> b -> a`).
std::vector<uint32_t> topological_order(const Graph& g, const CompiledGraph& c);
//! The keys of `g` in dependency order. Throws CycleError or MissingKeyError.
std::vector<Key> toposort(const Graph& g);

//! One cycle of `c` as ids, the first repeated at the end; empty when `c` is acyclic.
std::vector<uint32_t> find_cycle(const CompiledGraph& c);
//! One cycle of `g` as keys (`a, b, a`), empty when there is none.
std::vector<Key> find_cycle(const Graph& g);

}  // namespace tessera
