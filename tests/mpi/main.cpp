// The doctest main of the MPI suite: every rank runs every test case (a test that
// uses MPI makes each rank play its part); only rank 0 prints, unless a case fails
// on another rank, whose report then comes with its rank.
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <string>

#include "tessera/mpi/environment.hpp"

int main(int argc, char** argv) {
  tessera::mpi::Environment mpi(argc, argv);
  doctest::Context context(argc, argv);
  if (tessera::mpi::world_rank() != 0) {
    context.setOption("success", false);
    context.setOption("minimal", true);  // only failures, from the other ranks
  }
  return context.run();
}
