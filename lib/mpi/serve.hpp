// The engine side of an MPI cluster: what ranks 1..N-1 do inside their Cluster.
#pragma once

#include <mpi.h>

#include <chrono>

namespace tessera::mpi::detail {

//! Runs the client's requests on this rank, in order, until the client stops
//! the cluster. `ctl` carries requests and answers, `peer` the engines' notices
//! and their collective communicators.
void serve(MPI_Comm ctl, MPI_Comm peer, std::chrono::duration<double> lost_after);

}  // namespace tessera::mpi::detail
