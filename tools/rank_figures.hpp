// tools/rank_figures.hpp — what `tessera graph run` under mpirun gathers on rank 0:
// every rank's RunStats (printed as a row per rank beside their sum), and one
// Chrome trace with a process per rank.
//
// The gathers are collectives over the run's Communicator: every rank calls
// them; rank 0 gets the result. The per-rank figures are the ones a run across
// ranks fills in (tessera/scheduler/options.hpp): the tasks of the rank's run,
// the results it sent and received (messages and wire bytes), the time it
// waited on the network, the bytes it held at most, what it spilled.
//
// @code
//   std::vector<RunStats> ranks = gather_run_stats(*comm, stats);   // empty but on rank 0
//   if (comm->rank() == 0) print_rank_figures(ranks, stdout);
//   write_trace_across(*comm, profiler, "trace.json");                // rank 0 writes one trace
// @endcode
#pragma once

#include <cstdio>
#include <string>
#include <vector>

#include "tessera/comm/communicator.hpp"
#include "tessera/diagnostics/profiler.hpp"
#include "tessera/scheduler/options.hpp"

namespace tessera::tool {

//! Tasks a rank ran itself in a run across ranks that completed: its run's tasks
//! less the results it received (each counts as one of its run's tasks).
size_t tasks_computed(const RunStats& stats);

//! Every rank's `stats`, by rank, on rank 0 (the others get an empty vector).
//! Collective. The ranks run the same program, so the figures travel as bytes.
std::vector<RunStats> gather_run_stats(Communicator& comm, const RunStats& stats);

//! The figures of `ranks` added up (tasks: tasks_computed; peaks and workers: summed too).
RunStats sum_run_stats(const std::vector<RunStats>& ranks);

//! Prints a row of figures per rank and their sum (for the peak bytes, a bound
//! on what the ranks held at one moment).
void print_rank_figures(const std::vector<RunStats>& ranks, std::FILE* out);

//! Gathers every rank's trace to rank 0, which writes them to `path` as one
//! Chrome trace: process N is rank N, named "rank N". Collective; throws
//! StorageError on rank 0 when it cannot write.
void write_trace_across(Communicator& comm, const diagnostics::Profiler& profiler, const std::string& path);

}  // namespace tessera::tool
