// launched_by_mpirun: the launchers' environment variables, read before MPI starts.
#include <cstdlib>
#include <string>

#include "ranks.hpp"

namespace tessera::tool {

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && std::atol(v) > 1) return true;
  }
  return false;
}

}  // namespace tessera::tool
