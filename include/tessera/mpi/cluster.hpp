// tessera/mpi/cluster.hpp — SPMD engines that are the ranks of one mpirun program.
//
// The same BroadcastView as a local spmd::Cluster (apply, execute, push, pull,
// scatter, gather, Reference, AsyncResult, CompositeError, and barrier,
// allreduce and allgather in spmd::context()), with engines that are MPI ranks.
// Every rank runs the same main and makes one Cluster, collectively. Rank 0 is the
// client: its Cluster returns at once and drives engines 0..N-2, which are ranks
// 1..N-1. On every other rank the constructor serves the client's requests until
// the client's Cluster stops, then returns with is_client() false, and main goes
// on to its end (usually: return).
//
// What crosses processes: functions by their registered name (the same binary
// runs everywhere, addresses do not; see tessera/spmd/registry.hpp; an apply of
// an unregistered function raises tessera::Error on the client at once), and
// Values in their wire form (tessera/graph/wire.hpp). Collectives inside an apply
// are MPI's (MPI_Ibarrier, MPI_Iallreduce with the built-in ops, MPI_Iallgatherv)
// on a communicator of the view's engines, made once per set of engines; an
// engine waiting in one raises BarrierError when another engine of the apply
// left without reaching it, so nobody waits forever.
//
// A lost rank: every engine with work to do sends a heartbeat; when one is silent
// for `Options::lost_after`, every pending result fails (a CompositeError whose
// entry for that engine is a RankLostError naming the engine and its rank), the
// cluster refuses new requests, and destroying it ends the job with MPI_Abort,
// since MPI cannot finalize with a dead rank. Start such jobs with
// `mpirun --enable-recovery` so that Open MPI keeps the other ranks running long
// enough for the client to report; without it mpirun ends them all at once.
//
// @code
//   std::vector<int> work(int rank, int size);       // the SPMD function
//   TESSERA_SPMD_REGISTER(work);                     // every rank knows it by name
//   int main(int argc, char** argv) {
//     tessera::mpi::Environment env(argc, argv);
//     tessera::mpi::Cluster cluster;                 // ranks 1..N-1 serve in here
//     if (!cluster.is_client()) return 0;
//     auto view = cluster.broadcast_view();
//     view.scatter("rank", cluster.ids(), /*flatten=*/true);
//     auto parts = view.apply(work, tessera::spmd::Reference("rank"), cluster.size()).get();
//   }
// @endcode
//
// Thread-safe on the client as spmd::Cluster is; make it on the main thread of
// every rank, after the Environment, one at a time.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <vector>

#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/spmd/view.hpp"

namespace tessera::mpi {

namespace detail {
class Client;
}  // namespace detail

//! An engine rank went silent while it had requests to run (killed, crashed);
//! a tessera::RankLostError, as a lost rank of a run across ranks.
class RankLostError : public tessera::RankLostError {
 public:
  using tessera::RankLostError::RankLostError;
};

//! A BroadcastView's cluster whose engines are the ranks of one mpirun program: rank 0 is the client.
class Cluster {
 public:
  //! How the client watches the engines.
  struct Options {
    //! A rank that sends nothing for this long while it has requests is lost;
    //! engines send a heartbeat every tenth of it while they work.
    std::chrono::duration<double> lost_after{10.0};
  };

  //! Collective over MPI_COMM_WORLD (see the file comment). Throws tessera::Error
  //! when MPI is not initialized or the world has fewer than 2 ranks.
  Cluster();
  //! As Cluster(), with `options`.
  explicit Cluster(Options options);
  //! stop() on the client (MPI_Abort when a rank was lost); nothing on engines.
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  //! True on rank 0, the only rank that may make views.
  bool is_client() const { return client_ != nullptr; }
  //! The number of engines: the world's size minus one.
  int size() const { return size_; }
  //! {0, 1, ..., size()-1}.
  std::vector<int> ids() const;
  //! A view on every engine. Throws tessera::Error on a rank that is not the client.
  spmd::BroadcastView broadcast_view() const;
  //! A view on `targets` (as spmd::Cluster's).
  spmd::BroadcastView broadcast_view(std::vector<int> targets) const;
  //! Lets every engine finish what it was sent, then releases them (their
  //! Clusters return). Idempotent; later requests raise Error.
  void stop();

 private:
  int size_;
  std::shared_ptr<detail::Client> client_;
};

}  // namespace tessera::mpi
