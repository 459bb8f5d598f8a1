#include "tessera/mpi/environment.hpp"

#include <mpi.h>

#include <cstdint>
#include <random>

#include <absl/strings/str_cat.h>

#include "mpi/require.hpp"
#include "tessera/graph/token.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::mpi {
namespace {

const char* thread_level_name(int level) {
  switch (level) {
    case MPI_THREAD_SINGLE: return "MPI_THREAD_SINGLE";
    case MPI_THREAD_FUNNELED: return "MPI_THREAD_FUNNELED";
    case MPI_THREAD_SERIALIZED: return "MPI_THREAD_SERIALIZED";
    case MPI_THREAD_MULTIPLE: return "MPI_THREAD_MULTIPLE";
    default: return "an unknown level";
  }
}

}  // namespace

void detail::require_initialized(const char* what) {
  int initialized = 0;
  MPI_Initialized(&initialized);
  if (!initialized)
    throw Error(absl::StrCat(what, ": MPI is not initialized (make a tessera::mpi::Environment first)"));
}

Environment::Environment(int& argc, char**& argv) : owns_(false) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) throw Error("tessera::mpi::Environment: MPI was finalized already and cannot start again");
  int initialized = 0;
  MPI_Initialized(&initialized);
  int provided = MPI_THREAD_SINGLE;
  if (initialized) {
    MPI_Query_thread(&provided);
  } else {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
    owns_ = true;
  }
  if (provided < MPI_THREAD_MULTIPLE) {
    if (owns_) MPI_Finalize();
    throw Error(absl::StrCat("tessera::mpi::Environment: expected MPI_THREAD_MULTIPLE, MPI provides ",
                             thread_level_name(provided)));
  }
  // Rank 0's seed for every rank (any value will do, so long as all share it).
  uint64_t seed = std::random_device{}();
  seed = (seed << 32) ^ std::random_device{}();
  MPI_Bcast(&seed, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  seed_unique_tokens(seed);
}

Environment::~Environment() {
  if (owns_) MPI_Finalize();
}

int world_rank() {
  detail::require_initialized("tessera::mpi::world_rank");
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
}

int world_size() {
  detail::require_initialized("tessera::mpi::world_size");
  int size = 0;
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
}

}  // namespace tessera::mpi
