// start_mpi in a tessera built without MPI.
#include "command.hpp"
#include "ranks.hpp"

namespace tessera::tool {

std::shared_ptr<Communicator> start_mpi() {
  throw UsageError("this tessera was built without MPI (meson -Dmpi=disabled, or no Open MPI found): "
                   "it cannot work across ranks; run it without mpirun and --mpi");
}

}  // namespace tessera::tool
