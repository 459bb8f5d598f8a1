// tools/rank_figures.hpp — what `tessera graph run` under mpirun gathers on rank 0:
// each rank's RunStats beside their sum, and one Chrome trace with a process per rank.
//
// Every rank calls these (they are collectives over the run's Communicator);
// only rank 0 prints or writes. The per-rank figures are the ones a run across
// ranks fills in (tessera/scheduler/options.hpp): the tasks the rank ran, the
// results it sent and received (messages and wire bytes), the time it waited
// on the network, the bytes it held at most.
//
// @code
//   print_rank_figures(*comm, stats, stdout);           // rank 0 prints the table
//   write_trace_across(*comm, profiler, "trace.json");   // rank 0 writes one trace
// @endcode
#pragma once

#include <cstdio>
#include <string>

#include "tessera/comm/communicator.hpp"
#include "tessera/diagnostics/profiler.hpp"
#include "tessera/scheduler/options.hpp"

namespace tessera::tool {

//! Tasks a rank ran itself in a run across ranks that completed: its run's tasks
//! less the results it received (each counts as one of its run's tasks).
size_t tasks_computed(const RunStats& stats);

//! Prints on rank 0, to `out`, a row of figures per rank and their sum (the
//! peak bytes summed: what the ranks held at most, together). Collective.
void print_rank_figures(Communicator& comm, const RunStats& stats, std::FILE* out);

//! Gathers every rank's trace to rank 0, which writes them to `path` as one
//! Chrome trace: process N is rank N, named "rank N". Collective; throws
//! StorageError on rank 0 when it cannot write.
void write_trace_across(Communicator& comm, const diagnostics::Profiler& profiler, const std::string& path);

}  // namespace tessera::tool
