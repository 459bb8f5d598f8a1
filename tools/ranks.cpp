// launched_by_mpirun: the launchers' environment variables, read before MPI starts;
// and what commands across ranks share (agree, workers_per_rank).
#include <algorithm>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "command.hpp"
#include "ranks.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::tool {

bool launched_by_mpirun() {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && std::atol(v) > 1) return true;
  }
  return false;
}

void agree(Communicator& comm, const std::exception_ptr& failure) {
  try {
    agree_on_errors(comm, [&] {
      if (failure) std::rethrow_exception(failure);
    });
  } catch (const Error&) {
    if (!failure) throw;  // only others failed: the agreed error names them
    // This rank's own failure, named by its rank (every rank prints its own line).
    const std::string rank = "rank " + std::to_string(comm.rank()) + " of " + std::to_string(comm.size()) + ": ";
    try {
      std::rethrow_exception(failure);
    } catch (const InputError& e) {
      throw InputError("", rank + e.what());
    } catch (const UsageError& e) {
      throw UsageError(rank + e.what());
    } catch (const std::exception& e) {
      throw Error(rank + e.what());
    }
  }
}

void agree_on_options(Communicator& comm, const std::string& options) {
  const std::vector<std::string> all = allgather_strings(comm, options);
  std::string given;
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) given += "; rank " + std::to_string(r) + " was given '" + all[r] + "'";
  }
  if (given.empty()) return;
  throw UsageError("expected every rank to be given the same options, found rank 0 given '" + all[0] + "'" + given);
}

int workers_per_rank(int ranks) {
  const int hardware = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  return std::max(hardware / std::max(ranks, 1), 1);
}

}  // namespace tessera::tool
