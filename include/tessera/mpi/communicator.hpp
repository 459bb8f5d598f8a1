// tessera/mpi/communicator.hpp — tessera::Communicator over MPI.
//
// `world_communicator()` gives this rank's endpoint over a duplicate of
// MPI_COMM_WORLD (so tessera's messages never meet the program's own), for
// code written against tessera::Communicator, such as the rechunk across
// processes (RechunkStoreOptions::communicator). Byte counts past 2^31 go as
// point-to-point messages of at most 1 GiB; otherwise one MPI_Alltoallv.
//
// @code
//   tessera::mpi::Environment mpi(argc, argv);
//   namespace ta = tessera::array;
//   ta::rechunk_store(ta::from_zarr("rows.zarr"), {-1, 256}, "cols.zarr",
//                     {.communicator = tessera::mpi::world_communicator()});
// @endcode
//
// Needs an Environment; drop the communicator before the Environment ends. As
// any Communicator, one thread calls its collectives at a time.
#pragma once

#include <memory>

#include "tessera/comm/communicator.hpp"

namespace tessera::mpi {

//! A new endpoint over a duplicate of MPI_COMM_WORLD (MPI_Comm_dup: collective,
//! every rank calls it). Throws tessera::Error when MPI is not initialized.
std::shared_ptr<Communicator> world_communicator();

}  // namespace tessera::mpi
