// Tasks that a run across ranks splits into smaller ones, so that only the part
// of an input that another rank needs travels to it.
//
// A module registers, by function name, how to split its tasks (array's rechunk
// registers its fused merge, `rechunk_copy`: docs/mpi-graphs.md). get and
// get_sync over a Graph with a communicator of more than one rank build their
// Plan from split_for_ranks(graph); a run in one process never sees the split.
#pragma once

#include <optional>
#include <string>

#include "tessera/graph/graph.hpp"

namespace tessera::detail {

//! Writes into `out` the tasks that replace `task` (under `key`, which keeps
//! its key and value): `key`'s new node and any new keys it reads.
using SplitForRanks = void (*)(const Key& key, const Task& task, Graph& out);

//! Registers `split` for the tasks whose function is named `function_name`
//! (at static initialization, from the module that makes them). Returns true.
bool register_split_for_ranks(const std::string& function_name, SplitForRanks split);

//! `g` with every task of a registered function replaced by its split form;
//! nullopt when it has none (the run uses `g` as it is: a Graph's copy is deep,
//! keys and tasks). n tasks cost n lookups.
std::optional<Graph> split_for_ranks(const Graph& g);

}  // namespace tessera::detail
