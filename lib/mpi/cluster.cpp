#include "tessera/mpi/cluster.hpp"

#include <mpi.h>

#include <numeric>

#include <absl/strings/str_cat.h>

#include "client.hpp"
#include "serve.hpp"
#include "tessera/mpi/environment.hpp"

namespace tessera::mpi {

Cluster::Cluster() : Cluster(Options{}) {}

Cluster::Cluster(Options options) : size_(0) {
  const int world = world_size();  // throws when MPI is not initialized
  if (world < 2) {
    throw Error(
        "tessera::mpi::Cluster: the world has 1 rank, and a cluster needs a client (rank 0) and at least one "
        "engine; start the program with mpirun -n 2 or more");
  }
  size_ = world - 1;
  // Communicators of their own, so that tessera's messages never meet the
  // program's on MPI_COMM_WORLD; errors come back as codes, not as an abort, so a
  // lost rank is reported rather than fatal.
  MPI_Comm ctl = MPI_COMM_NULL, peer = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &ctl);
  MPI_Comm_dup(MPI_COMM_WORLD, &peer);
  MPI_Comm_set_errhandler(ctl, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(peer, MPI_ERRORS_RETURN);
  if (world_rank() == 0) {
    client_ = std::make_shared<detail::Client>(ctl, size_, options.lost_after);
  } else {
    detail::serve(ctl, peer, options.lost_after);
  }
}

Cluster::~Cluster() { stop(); }

std::vector<int> Cluster::ids() const {
  std::vector<int> ids(static_cast<size_t>(size_));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

spmd::BroadcastView Cluster::broadcast_view() const { return broadcast_view(ids()); }

spmd::BroadcastView Cluster::broadcast_view(std::vector<int> targets) const {
  if (!client_) {
    throw Error(absl::StrCat("tessera::mpi::Cluster: rank ", world_rank(),
                             " served as an engine; only the client, rank 0, makes views (test is_client())"));
  }
  spmd::detail::check_targets(targets, size_);
  return spmd::detail::make_view(client_, std::move(targets));
}

void Cluster::stop() {
  if (client_) client_->stop();
}

}  // namespace tessera::mpi
