// What libtessera-mpi's entry points check before they call MPI.
#pragma once

namespace tessera::mpi::detail {

//! Throws tessera::Error, naming `what`, unless MPI is initialized.
void require_initialized(const char* what);

}  // namespace tessera::mpi::detail
