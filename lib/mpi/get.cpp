#include "tessera/mpi/get.hpp"

#include "tessera/mpi/communicator.hpp"
#include "tessera/scheduler/get.hpp"

namespace tessera::mpi {

Result get(const Graph& g, const Keys& keys, GetOptions options) {
  if (!options.communicator) options.communicator = world_communicator();
  return tessera::get(g, keys, options);
}

}  // namespace tessera::mpi
