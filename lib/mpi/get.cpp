#include "tessera/mpi/get.hpp"

#include "tessera/across/get.hpp"
#include "tessera/mpi/communicator.hpp"

namespace tessera::mpi {

Result get(const Graph& g, const Keys& keys, GetOptions options) {
  if (!options.communicator) options.communicator = world_communicator();
  return across::get(g, keys, options);
}

}  // namespace tessera::mpi
