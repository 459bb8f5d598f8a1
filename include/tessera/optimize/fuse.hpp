// tessera/optimize/fuse.hpp — graph rewrites that store fewer intermediate results.
//
// `fuse` merges linear chains (a task whose only reader is the next task of the
// chain, the next reading nothing else) into one task, as dask's
// `fuse_linear` does: the scheduler then runs one task instead of many and
// holds no intermediate result. `inline_functions` computes cheap tasks (a
// transpose, `x + 1`) inside every task that reads them instead of storing
// their results, as dask's `inline_functions` does. Both keep every key in
// `keys`/`outputs` as it is, and the rewritten graph computes the same values.
//
// @code
//   // x -> inc -> double -> out   becomes   x -> out (running inc, double, out)
//   tessera::Graph fused = tessera::fuse(g, {"out"});
//   tessera::Graph inl = tessera::inline_functions(g, {"out"}, {"transpose"});
// @endcode
//
// Thread-safe: pure functions of their arguments.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include <initializer_list>
#include <span>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"

namespace tessera {

//! `g` with each linear chain of tasks made one task under the key of the
//! chain's last task. A link is fused into its reader when both are tasks, the
//! link has exactly one reader, the reader reads nothing else (dask's
//! `fuse_linear` rule), and the link is not in `keys`. The fused task's function name joins the
//! chain's names with '+'. Throws MissingKeyError / CycleError for a broken graph.
Graph fuse(const Graph& g, std::span<const Key> keys);
inline Graph fuse(const Graph& g, std::initializer_list<Key> keys) {
  return fuse(g, std::span<const Key>(keys.begin(), keys.size()));
}

//! What `fuse` merges, on the ids of `c` (the compiled form of `g`): per id,
//! the reader that task is fused into, or c.size() when it stays a key of its
//! own; for callers that rewrite their own form of a graph alike (Python's
//! tessera.fuse over dask's dict). Throws CycleError for a cyclic graph.
//! @code
//!   const tessera::CompiledGraph c = tessera::compile(g);
//!   std::vector<uint32_t> into = tessera::fuse_targets(g, c, {tessera::Key("out")});
//! @endcode
std::vector<uint32_t> fuse_targets(const Graph& g, const CompiledGraph& c, std::span<const Key> keys);

//! The chain that ends at id `end` (one that no `into` entry names, as
//! fuse_targets returns them), top-down: the ids fused into `end`, then `end`.
std::vector<uint32_t> fuse_chain(const CompiledGraph& c, std::span<const uint32_t> into, uint32_t end);

//! `g` where every task whose function name is in `fast_functions`, that is not
//! in `outputs` and has readers, is computed inside each reader (as a nested
//! step) instead of being stored; such tasks are removed from the graph.
Graph inline_functions(const Graph& g, std::span<const Key> outputs,
                       const std::vector<std::string>& fast_functions);
inline Graph inline_functions(const Graph& g, std::initializer_list<Key> outputs,
                              const std::vector<std::string>& fast_functions) {
  return inline_functions(g, std::span<const Key>(outputs.begin(), outputs.size()), fast_functions);
}

}  // namespace tessera
