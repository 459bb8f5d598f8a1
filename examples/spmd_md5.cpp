// The SPMD tutorial in C++: the MD5 of every file of a folder, computed by a
// plain loop and by one apply on a local cluster, where each engine hashes its
// own partition of the files (the tutorial itself is spmd_md5::run_tutorial, which
// spmd_md5_mpi.cpp runs on MPI ranks).
//
//   spmd_md5 [engines=100] [files=500] [folder=the temporary folder]
#include <cstdlib>
#include <filesystem>

#include "spmd_md5.hpp"
#include "tessera/spmd/spmd.hpp"

int main(int argc, char** argv) {
  int engines = argc > 1 ? std::atoi(argv[1]) : 100;
  int files = argc > 2 ? std::atoi(argv[2]) : 500;
  std::filesystem::path parent = argc > 3 ? argv[3] : std::filesystem::temp_directory_path();
  tessera::spmd::Cluster cluster(engines);
  return spmd_md5::run_tutorial(cluster, files, parent);
}
