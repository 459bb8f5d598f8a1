// tools/ranks.hpp — whether a command (`tessera rechunk`, `tessera graph run`)
// runs as one rank of an mpirun job, its communicator when it does, and what
// such commands share: the agreement on errors before the work, the workers
// per rank.
//
// Under mpirun (Open MPI's OMPI_COMM_WORLD_SIZE, or PMI_SIZE, above 1) or with
// --mpi, the command starts MPI (a tessera::mpi::Environment that lives to the
// end of the program) and works across the job's ranks. A tessera built
// without MPI (-Dmpi=disabled) refuses with a UsageError instead.
//
// @code
//   if (tessera::tool::launched_by_mpirun() || mpi_flag) comm = tessera::tool::start_mpi();
// @endcode
#pragma once

#include <exception>
#include <memory>
#include <string>

#include "tessera/comm/communicator.hpp"

namespace tessera::tool {

//! True when the environment says this process is one of several MPI ranks.
bool launched_by_mpirun();

//! Starts MPI once and returns a communicator over every rank. UsageError when
//! this tessera was built without MPI.
std::shared_ptr<Communicator> start_mpi();

//! Agrees with every rank on `failure` (this rank's, or null): returns when no
//! rank failed. Otherwise throws on every rank: a rank that failed, its own
//! error named by its rank ("rank 1 of 2: a.json: cannot open ..."), of the
//! same kind when an InputError or UsageError (their exit status), else
//! tessera::Error; a rank that did not, the error naming each rank that failed
//! (agree_on_errors). Collective.
void agree(Communicator& comm, const std::exception_ptr& failure);

//! UsageError on every rank unless every rank was given the same `options` (the
//! text of the options that must agree, such as "--workers 2 --memory-limit
//! 1GiB"): a launch that gives one rank other options (mpirun's `A : B` form)
//! would otherwise run each rank under its own and report rank 0's. Collective.
void agree_on_options(Communicator& comm, const std::string& options);

//! Workers of each of `ranks` ranks when the user gave none: the hardware's
//! threads shared among them (the ranks of a job often share a machine), at least 1.
int workers_per_rank(int ranks);

}  // namespace tessera::tool
