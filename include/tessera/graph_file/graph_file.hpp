// tessera/graph_file/graph_file.hpp — load a `tessera-graph/1` file as a runnable Graph.
//
// A graph file (format in docs/graph-format.md) records the structure of a real
// task graph, exported from dask: each task's key, the keys it reads, its
// function's name and the size of its result. Loading one gives a Graph of
// synthetic tasks that can be culled, ordered and run like any other: each task
// reads its dependencies and, when it runs, allocates a result of the recorded
// size (a SyntheticResult, whose nbytes() reports it), or with
// ResultMemory::counted only reports that size; `literal` nodes are literals
// that report their size without holding it, so reading a file never allocates
// what its graph would. The file's requested keys and dask's own figures for the
// graph come with it, so tessera's order and schedulers can be compared with
// dask's. Before running a file under a memory limit, check_memory_limit refuses
// what the recorded sizes say cannot fit, before anything is allocated.
//
// @code
//   tessera::GraphFile f = tessera::load_graph_file("tests/data/graphs/tree_sum.json");
//   auto prio = tessera::order(f.graph);
//   if (f.reference) std::cout << f.reference->sync_max_held.value_or(0);
//   tessera::Plan plan(f.graph, f.compiled, {}, tessera::Keys(f.outputs));
//   tessera::check_memory_limit(f, plan, size_t{32} << 20);  // throws MemoryLimitError
//   tessera::get(plan, {.memory_limit = size_t{32} << 20});
// @endcode
//
// Thread-safe: load_graph_file touches no shared state.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include <unordered_map>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"

namespace tessera {

class Plan;

//! What a synthetic node holds: `size` bytes, reported by nbytes(). A task's
//! result owns that much memory (`data`); a file's literal only reports it.
struct SyntheticResult {
  //! Bytes reported by nbytes().
  uint64_t size = 0;
  //! Memory owned by a task's result (empty for a literal).
  std::vector<std::byte> data;
  //! `size`.
  uint64_t nbytes() const { return size; }
  //! A result that owns `size` bytes of zeroed memory.
  static SyntheticResult allocate(uint64_t size);
};

//! Synthetic results spill like any other result under a memory limit.
template <>
struct Spillable<SyntheticResult> {
  //! Writes the size and the owned bytes.
  static void serialize(const SyntheticResult& r, SpillWriter& w) {
    w.put(r.size);  // a literal reports its size without owning it
    Spillable<std::vector<std::byte>>::serialize(r.data, w);
  }
  //! Reads back what serialize wrote.
  static SyntheticResult deserialize(SpillReader& r) {
    SyntheticResult out;
    out.size = r.get<uint64_t>();
    out.data = Spillable<std::vector<std::byte>>::deserialize(r);
    return out;
  }
};

//! dask's figures for a graph file (each optional in the file).
struct GraphReference {
  //! The program that exported the figures.
  std::string tool;
  //! dask.order's priority per key (lower runs first); empty when absent.
  std::unordered_map<Key, uint32_t> dask_order;
  //! dask.order's max pressure.
  std::optional<uint64_t> order_max_pressure;
  //! Results held at most by dask's get_sync.
  std::optional<uint64_t> sync_max_held;
  //! Bytes held at most by dask's get_sync.
  std::optional<uint64_t> sync_max_held_bytes;
};

//! A loaded graph file.
struct GraphFile {
  //! The file's `name`.
  std::string name;
  //! What made the graph (e.g. a dask expression).
  std::string source;
  //! The graph; its tasks make SyntheticResults of the recorded sizes.
  Graph graph;
  //! The graph's compiled form, made once when the file was checked (reuse it
  //! with order(graph, compiled) or a Plan).
  CompiledGraph compiled{Csr{}};
  //! The requested keys, in the file's order.
  std::vector<Key> outputs;
  //! The recorded result size of each node, by node id.
  std::vector<uint64_t> nbytes;
  //! dask's figures, when the file has them.
  std::optional<GraphReference> reference;
};

//! What a synthetic task's result holds when the task runs.
enum class ResultMemory {
  allocated,  //!< the recorded size in zeroed memory, as the recorded task made (running a file)
  counted,    //!< nothing: the result only reports its size (measuring a file's memory, as `graph inspect` does)
};

//! Reads the `tessera-graph/1` file at `path`. Throws StorageError for a file
//! that cannot be read or is not JSON, lacks a required field or has one of the
//! wrong kind (something nested inside a key, a negative size); MissingKeyError
//! for a dependency or output that is not a key of the file; CycleError for a
//! cycle. Each message starts with the path.
//! @code
//!   auto f = tessera::load_graph_file("big.json", tessera::ResultMemory::counted);
//!   tessera::get_sync(f.graph, tessera::Keys(f.outputs));   // allocates no result
//! @endcode
GraphFile load_graph_file(const std::string& path, ResultMemory results = ResultMemory::allocated);

//! Checks, by the sizes `f` records and before anything runs, that `plan` (of
//! f.graph) can keep within `memory_limit` bytes: every task's distinct inputs
//! and result together, and the requested results together (a run returns them
//! all in memory). Throws MemoryLimitError naming the first task that cannot fit.
//! Literals count for nothing, as in a run (they hold no memory).
//! @code
//!   tessera::Plan plan(f.graph, f.compiled, {}, tessera::Keys(f.outputs));
//!   tessera::check_memory_limit(f, plan, size_t{32} << 20);
//! @endcode
void check_memory_limit(const GraphFile& f, const Plan& plan, size_t memory_limit);

}  // namespace tessera
