// tessera/graph_file/graph_file.hpp — load a `tessera-graph/1` file as a runnable Graph.
//
// A graph file (format in docs/graph-format.md) records the structure of a real
// task graph, exported from dask: each task's key, the keys it reads, its
// function's name and the size of its result. Loading one gives a Graph of
// synthetic tasks that can be culled, ordered and run like any other: each task
// reads its dependencies and, when it runs, allocates a result of the recorded
// size (a SyntheticResult, whose nbytes() reports it); `literal` nodes are
// literals that report their size without holding it, so reading a file never
// allocates what its graph would. The file's requested keys and dask's own figures for the graph come
// with it, so tessera's order and schedulers can be compared with dask's.
//
// @code
//   tessera::GraphFile f = tessera::load_graph_file("tests/data/graphs/tree_sum.json");
//   auto prio = tessera::order(f.graph);
//   if (f.reference) std::cout << f.reference->sync_max_held.value_or(0);
// @endcode
//
// Thread-safe: load_graph_file touches no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"

namespace tessera {

//! What a synthetic node holds: `size` bytes, reported by nbytes(). A task's
//! result owns that much memory (`data`); a file's literal only reports it.
struct SyntheticResult {
  uint64_t size = 0;
  std::vector<std::byte> data;
  uint64_t nbytes() const { return size; }
  //! A result that owns `size` bytes of zeroed memory.
  static SyntheticResult allocate(uint64_t size);
};

//! dask's figures for a graph file (each optional in the file).
struct GraphReference {
  std::string tool;
  //! dask.order's priority per key (lower runs first); empty when absent.
  absl::flat_hash_map<Key, uint32_t> dask_order;
  std::optional<uint64_t> order_max_pressure;
  std::optional<uint64_t> sync_max_held;
  std::optional<uint64_t> sync_max_held_bytes;
};

//! A loaded graph file.
struct GraphFile {
  std::string name;
  std::string source;
  Graph graph;
  //! The graph's compiled form, made once when the file was checked (reuse it
  //! with order(graph, compiled) or a Plan).
  CompiledGraph compiled{Csr{}};
  //! The requested keys, in the file's order.
  std::vector<Key> outputs;
  //! The recorded result size of each node, by node id.
  std::vector<uint64_t> nbytes;
  std::optional<GraphReference> reference;
};

//! Reads the `tessera-graph/1` file at `path`. Throws StorageError for a file
//! that cannot be read or is not JSON, lacks a required field or has one of the
//! wrong kind (something nested inside a key, a negative size); MissingKeyError
//! for a dependency or output that is not a key of the file; CycleError for a
//! cycle. Each message starts with the path.
GraphFile load_graph_file(const std::string& path);

}  // namespace tessera
