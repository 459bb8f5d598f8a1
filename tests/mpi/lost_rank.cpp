// A rank killed in the middle of an apply, while the others wait in a barrier (lost_rank.sh runs this under
// `mpirun --enable-recovery -n 3`): the client's pending result must fail with an
// error naming the rank, within the Cluster's lost_after and not long after, and
// the job must then end (the Cluster's destructor calls MPI_Abort) rather than hang.
// Prints "lost-rank: OK" when every check held; lost_rank.sh looks for it.
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <string>

#include "tessera/mpi/cluster.hpp"
#include "tessera/mpi/environment.hpp"
#include "tessera/spmd/spmd.hpp"

namespace spmd = tessera::spmd;

namespace {

// The others wait at a barrier the victim never reaches.
int die_on(int victim) {
  if (spmd::context().engine_id() == victim) raise(SIGKILL);
  spmd::context().barrier();
  return 0;
}
TESSERA_SPMD_REGISTER(die_on);

bool expect(bool ok, const std::string& what) {
  if (!ok) std::printf("lost-rank: FAILED: %s\n", what.c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  tessera::mpi::Environment env(argc, argv);
  tessera::mpi::Cluster::Options options;
  options.lost_after = std::chrono::seconds(2);
  tessera::mpi::Cluster cluster(options);
  if (!cluster.is_client()) return 0;
  auto view = cluster.broadcast_view();
  auto start = std::chrono::steady_clock::now();
  bool ok = true;
  try {
    view.apply(die_on, 1).get();
    ok = expect(false, "the apply succeeded");
  } catch (const spmd::CompositeError& e) {
    double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ok &= expect(seconds >= 2 && seconds < 8, "the error came after " + std::to_string(seconds) + " s");
    ok &= expect(e.errors().size() == static_cast<size_t>(cluster.size()), "one error per engine");
    for (const auto& r : e.errors()) {
      std::string want = r.engine_id == 1
                             ? "[1:apply] tessera::mpi::RankLostError: engine 1 (MPI rank 2) was lost: it sent nothing "
                               "for 2 s while it had requests to run (killed or crashed?)"
                             : "[" + std::to_string(r.engine_id) +
                                   ":apply] tessera::Error: abandoned: engine 1 (MPI rank 2) of the cluster was lost "
                                   "while this request ran";
      ok &= expect(r.str() == want, "got '" + r.str() + "'");
    }
  }
  try {
    view.apply(die_on, 0);
    ok = expect(false, "a request after the loss was accepted");
  } catch (const tessera::Error& e) {
    ok &= expect(std::string(e.what()) == "apply: the MPI cluster lost engine 1 (rank 2) and takes no more requests",
                 std::string("got '") + e.what() + "'");
  }
  if (ok) std::printf("lost-rank: OK\n");
  std::fflush(stdout);
  return 0;  // ~Cluster ends the job with MPI_Abort
}
