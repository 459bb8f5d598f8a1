// The same SPMD tutorial (spmd_md5::run_tutorial) with engines that are MPI ranks:
//
//   mpirun -n 5 spmd_md5_mpi [files=500] [folder=the temporary folder]
//
// Rank 0 writes the files and drives; ranks 1..4 are the engines and hash them,
// so the folder must be one every rank sees (on one machine, any local folder).
// Every rank runs this main: the Cluster serves on ranks 1..N-1 until rank 0 is
// done, then they return.
#include <cstdlib>
#include <filesystem>

#include "spmd_md5.hpp"
#include "tessera/mpi/cluster.hpp"
#include "tessera/mpi/environment.hpp"
#include "tessera/spmd/spmd.hpp"

int main(int argc, char** argv) {
  tessera::mpi::Environment env(argc, argv);
  int files = argc > 1 ? std::atoi(argv[1]) : 500;
  std::filesystem::path parent = argc > 2 ? argv[2] : std::filesystem::temp_directory_path();
  tessera::mpi::Cluster cluster;
  if (!cluster.is_client()) return 0;
  return spmd_md5::run_tutorial(cluster, files, parent);
}
