// tessera/mpi/get.hpp — any graph across the ranks of an mpirun job.
//
// Every rank of the job calls tessera::mpi::get with the same graph and keys
// (SPMD, as the rechunk across ranks): each runs its share of the tasks
// (tessera::place, tessera/across/placement.hpp: array blocks by their
// position in their grid, other keys by runs of `order`) with its own workers
// and memory limit, and sends each result that another rank reads there once,
// in its wire form (tessera/graph/wire.hpp), while its tasks go on. It is
// tessera::across::get (tessera/across/get.hpp) over world_communicator(); the
// options are each rank's own (num_workers, memory_limit, stats: this rank's
// figures, with the bytes and messages it sent and received).
//
// The requested values come back on rank 0; the other ranks get a Result of the
// keys' shape whose values are empty, unless options.result_on_every_rank. A
// task that throws on any rank stops every rank, and every rank throws
// TaskError naming the key and the rank ("task ('x', 7) (f) failed: on rank 3:
// ..."). With a memory_limit, received results count against the receiving
// rank's budget, and a rank short of memory leaves the results it cannot hold
// in MPI until it can (deferred receives), so it holds at most its limit plus
// one task's need; a limit too small for a task is a MemoryLimitError on every
// rank, naming the task and "on rank N". A rank that dies (under mpirun
// --enable-recovery) is a RankLostError on every other rank within
// options.lost_after_seconds. docs/mpi-graphs.md describes the messages, the
// memory per rank and lost ranks.
//
// @code
//   tessera::mpi::Environment mpi(argc, argv);
//   tessera::Result r = tessera::mpi::get(g, {"w"}, {.num_workers = 4});
//   if (tessera::mpi::world_rank() == 0) std::cout << r[0].as<int>() << "\n";
// @endcode
//
// Needs an Environment. Call it from one thread of each rank at a time.
#pragma once

#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"

namespace tessera::mpi {

//! Computes `keys` of `g` across the ranks of MPI_COMM_WORLD (see the file
//! comment); a communicator already in `options` is used instead. Collective:
//! every rank calls it with the same graph and keys. Throws tessera::Error when
//! MPI is not initialized.
//! @code
//!   auto r = tessera::mpi::get(g, {"z", "w"});   // values on rank 0
//! @endcode
Result get(const Graph& g, const Keys& keys, GetOptions options = {});

}  // namespace tessera::mpi
