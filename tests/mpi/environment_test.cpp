#include <doctest/doctest.h>

#include <mpi.h>

#include "tessera/graph/error.hpp"
#include "tessera/mpi/environment.hpp"

TEST_CASE("mpi: every rank knows its rank and the world's size") {
  const int rank = tessera::mpi::world_rank();
  const int size = tessera::mpi::world_size();
  REQUIRE(size >= 1);
  REQUIRE(rank >= 0);
  REQUIRE(rank < size);
  int sum = rank;
  MPI_Allreduce(MPI_IN_PLACE, &sum, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  CHECK(sum == size * (size - 1) / 2);
}

TEST_CASE("mpi: a second Environment borrows the running MPI and keeps it running") {
  int argc = 0;
  char** argv = nullptr;
  { tessera::mpi::Environment again(argc, argv); }
  int finalized = 1;
  MPI_Finalized(&finalized);
  CHECK(finalized == 0);
}
