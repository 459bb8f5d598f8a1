// A rank killed in the middle of a get across ranks (lost_rank.sh runs this
// under `mpirun --enable-recovery -n 4`): rank 2's task raises SIGKILL while
// every other rank waits for its result. Each surviving rank must throw
// tessera::RankLostError naming rank 2 within GetOptions::lost_after_seconds (2 s)
// and not long after, instead of hanging; it prints "lost-get: rank R OK" and
// leaves. lost_rank.sh counts the lines.
#include <signal.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/comm/communicator.hpp"
#include "tessera/mpi/environment.hpp"
#include "tessera/mpi/get.hpp"

using namespace tessera;

namespace {

bool expect(bool ok, int rank, const std::string& what) {
  if (!ok) std::printf("lost-get: rank %d FAILED: %s\n", rank, what.c_str());
  return ok;
}

}  // namespace

int main(int argc, char** argv) {
  mpi::Environment env(argc, argv);
  const int rank = mpi::world_rank(), n = mpi::world_size();
  // One block per rank; every ("y", i) reads rank 2's ("x", 2), whose task kills its process.
  Graph g;
  std::vector<Keys> keys;
  for (int64_t i = 0; i < n; ++i) {
    g.task(Key("x", {i}), [i] {
      if (i == 2) raise(SIGKILL);
      return uint64_t(i);
    });
    g.task(Key("y", {i}), [](uint64_t a, uint64_t b) { return a + b; }, ref(Key("x", {i})), ref(Key("x", {2})));
    keys.emplace_back(Key("y", {i}));
  }
  const auto start = std::chrono::steady_clock::now();
  bool ok = true;
  try {
    mpi::get(g, Keys(keys), {.num_workers = 2, .lost_after_seconds = 2});
    ok = expect(false, rank, "the get succeeded");
  } catch (const RankLostError& e) {
    const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ok &= expect(seconds >= 2 && seconds < 8, rank, "the error came after " + std::to_string(seconds) + " s");
    const std::string want = "rank 2 was lost: rank " + std::to_string(rank) +
                             " heard nothing from it for 2 s while it awaited its messages (killed or crashed?)";
    ok &= expect(e.what() == want, rank, std::string("got '") + e.what() + "'");
  } catch (const std::exception& e) {
    ok = expect(false, rank, std::string("another error: ") + e.what());
  }
  if (ok) std::printf("lost-get: rank %d OK\n", rank);
  std::fflush(stdout);
  // A job that lost a rank cannot finalize: each survivor leaves without it,
  // and mpirun ends once every process has.
  std::_Exit(0);
}
