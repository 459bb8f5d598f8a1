// tessera/across/get.hpp — one graph run across the ranks of a Communicator.
//
// Every rank calls across::get with the same graph and keys (SPMD): each runs
// its share of the tasks (tessera::place, tessera/across/placement.hpp) with the
// in-process scheduler (tessera::get, its own workers and memory limit) and
// sends each result that another rank reads there once, in its wire form
// (tessera/graph/wire.hpp), while its tasks go on; a thread of the run's own
// makes every Communicator call. The ranks may be MPI's (tessera::mpi::get is
// this over MPI_COMM_WORLD) or threads of one process (tessera::
// thread_communicators, as the tests use).
//
// The scheduler knows nothing of ranks: a run across ranks meets it through one
// seam, the public one. The results other ranks compute arrive in an Inbox
// (GetOptions::inbox: they are delivered, not computed); the results this rank
// computes for others are requested keys past Inbox::set_returned's count, and
// leave through a posttask hook, which hands each to the sending thread; under
// a memory limit the run keeps such a result counted (and spillable) until
// Inbox::sent says its wire form is made. docs/scheduler.md draws the seam.
//
// What GetOptions means here: `communicator` (needed), `result_on_every_rank`
// (else the values are on rank 0 and the other ranks get a Result of the keys'
// shape whose values are empty), `lost_after_seconds`, and `stats` (this rank's
// figures, with the bytes and messages it sent and received); the others are
// each rank's own, as for tessera::get. `inbox` must be empty: the run makes
// its own. A task that throws on any rank stops every rank, and every rank
// throws TaskError naming the key and the rank ("task ('x', 7) (f) failed: on
// rank 3: ..."). docs/mpi-graphs.md describes the messages, memory per rank and
// lost ranks.
//
// @code
//   auto comms = tessera::thread_communicators(2);   // or tessera::mpi::world_communicator()
//   // on each rank r (a thread here, a process under mpirun):
//   tessera::Result res = tessera::across::get(g, {"w"}, {.communicator = comms[r]});
//   if (r == 0) std::cout << res[0].as<int>() << "\n";
// @endcode
//
// Collective: call it from one thread of each rank at a time.
#pragma once

#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::across {

//! Computes `keys` of `g` across the ranks of options.communicator, each
//! rank's share with get's workers (see the file comment). Collective. Throws
//! ValueError when options has no communicator or already has an inbox.
//! @code
//!   auto r = tessera::across::get(g, {"z", "w"}, {.communicator = comm});   // values on rank 0
//! @endcode
Result get(const Graph& g, const Keys& keys, const GetOptions& options);
//! As get, each rank's share run by get_sync (the caller's thread alone).
//! @code
//!   auto r = tessera::across::get_sync(g, {"w"}, {.communicator = comm});
//! @endcode
Result get_sync(const Graph& g, const Keys& keys, const GetOptions& options);
//! As get, over a Plan every rank built the same way; its tasks run as they
//! are (only the Graph form splits tasks for ranks, as a rechunk registers).
//! @code
//!   auto r = tessera::across::get(tessera::Plan(g, {"w"}), {.communicator = comm});
//! @endcode
Result get(const Plan& plan, const GetOptions& options);
//! As get_sync, over a Plan.
//! @code
//!   auto r = tessera::across::get_sync(tessera::Plan(g, {"w"}), {.communicator = comm});
//! @endcode
Result get_sync(const Plan& plan, const GetOptions& options);

}  // namespace tessera::across
