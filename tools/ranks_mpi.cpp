// start_mpi with libtessera-mpi (built with MPI).
#include <memory>

#include "ranks.hpp"
#include "tessera/mpi/communicator.hpp"
#include "tessera/mpi/environment.hpp"

namespace tessera::tool {

std::shared_ptr<Communicator> start_mpi() {
  // MPI_Init takes no arguments of ours; it lives until exit, after every
  // communicator the command made is gone.
  static int argc = 0;
  static char** argv = nullptr;
  static const mpi::Environment environment(argc, argv);
  return mpi::world_communicator();
}

}  // namespace tessera::tool
