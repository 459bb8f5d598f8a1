// tools/ranks.hpp — whether `tessera rechunk` runs as one rank of an mpirun job,
// and its communicator when it does.
//
// Under mpirun (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE, above 1) or with
// --mpi, the command starts MPI (a tessera::mpi::Environment that lives to the
// end of the program) and rechunks across the job's ranks. A tessera built
// without MPI (-Dmpi=disabled) refuses with a UsageError instead.
//
// @code
//   if (tessera::tool::launched_by_mpirun() || mpi_flag) comm = tessera::tool::start_mpi();
// @endcode
#pragma once

#include <memory>

#include "tessera/comm/communicator.hpp"

namespace tessera::tool {

//! True when the environment says this process is one of several MPI ranks.
bool launched_by_mpirun();

//! Starts MPI once and returns a communicator over every rank. UsageError when
//! this tessera was built without MPI.
std::shared_ptr<Communicator> start_mpi();

}  // namespace tessera::tool
