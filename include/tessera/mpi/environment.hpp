// tessera/mpi/environment.hpp — MPI for the life of a program started by mpirun.
//
// libtessera-mpi (built with -Dmpi=enabled, or by default when Open MPI is found)
// runs tessera's SPMD engines and its rechunk on MPI ranks. The program mpirun
// starts on every rank makes one Environment at the top of main: it initializes
// MPI with MPI_THREAD_MULTIPLE, because engines and the scheduler's workers call
// MPI from threads of their own, and finalizes it when destroyed. When the program
// initialized MPI itself, Environment only checks the thread level and leaves
// finalizing to the program. Either way it seeds tessera::unique_token() on
// every rank with rank 0's seed (graph/token.hpp's seed_unique_tokens), so that the
// arrays every rank builds alike have the same names, as a run across ranks
// needs: the constructor is collective (every rank makes its Environment).
//
// @code
//   int main(int argc, char** argv) {
//     tessera::mpi::Environment mpi(argc, argv);
//     std::printf("rank %d of %d\n", tessera::mpi::world_rank(), tessera::mpi::world_size());
//   }
// @endcode
//
// Not thread-safe: make one Environment, on the main thread, before any other
// tessera::mpi call.
#pragma once

namespace tessera::mpi {

//! MPI_Init_thread on construction, MPI_Finalize on destruction (see the file comment).
class Environment {
 public:
  //! Initializes MPI (MPI_Init_thread with MPI_THREAD_MULTIPLE) unless it already
  //! is. Throws tessera::Error when MPI was finalized already or provides a lower
  //! thread level than MPI_THREAD_MULTIPLE (the message names the level found).
  Environment(int& argc, char**& argv);
  //! Finalizes MPI when this Environment initialized it.
  ~Environment();
  Environment(const Environment&) = delete;
  Environment& operator=(const Environment&) = delete;

 private:
  bool owns_;
};

//! This process's rank in MPI_COMM_WORLD; needs MPI initialized.
int world_rank();
//! The number of ranks in MPI_COMM_WORLD; needs MPI initialized.
int world_size();

}  // namespace tessera::mpi
