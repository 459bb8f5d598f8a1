// bench/mpi/run.sh's tessera side: the SPMD view on MPI ranks, under
// `mpirun -n ENGINES+1 bench_spmd_mpi FOLDER`, measured as
// bench/peers/spmd_ipyparallel.py measures ipyparallel:
//   - no-op apply: one apply of a function that does nothing, to every engine,
//     until every result is back (median of 200 after 20 warm-up calls);
//   - the MD5 tutorial end to end on a running cluster: scatter the ranks, apply
//     the SPMD function, flatten the digests, checked against the plain loop
//     (median of 5 after one warm-up).
// Rank 0 prints one JSON object with the medians in seconds.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <vector>

#include "spmd_md5.hpp"
#include "tessera/mpi/cluster.hpp"
#include "tessera/mpi/environment.hpp"
#include "tessera/spmd/spmd.hpp"

namespace spmd = tessera::spmd;

namespace {

void noop() {}
TESSERA_SPMD_REGISTER(noop);

double median_seconds(int warmup, int repeats, const std::function<void()>& fn) {
  for (int i = 0; i < warmup; ++i) fn();
  std::vector<double> samples;
  for (int i = 0; i < repeats; ++i) {
    auto t = std::chrono::steady_clock::now();
    fn();
    samples.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t).count());
  }
  std::sort(samples.begin(), samples.end());
  return samples[samples.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  tessera::mpi::Environment env(argc, argv);
  tessera::mpi::Cluster cluster;
  if (!cluster.is_client()) return 0;
  if (argc < 2) {
    std::fprintf(stderr, "usage: mpirun -n N bench_spmd_mpi FOLDER\n");
    return 2;
  }
  const std::string folder = argv[1];
  auto view = cluster.broadcast_view();
  const int n = cluster.size();
  double noop_s = median_seconds(20, 200, [&] { view.apply(noop).get(); });

  const std::vector<std::string> plain = spmd_md5::md5_sequential(folder);
  double plain_s = median_seconds(1, 5, [&] { spmd_md5::md5_sequential(folder); });
  bool same = true;
  double md5_s = median_seconds(1, 5, [&] {
    view.scatter("rank", cluster.ids(), /*flatten=*/true).get();
    auto sums = spmd::flatten(view.apply(spmd_md5::spmd_task, folder, spmd::Reference("rank"), n).get());
    same = same && sums == plain;
  });
  if (!same) {
    std::fprintf(stderr, "the engines' digests differ from the plain loop's\n");
    return 1;
  }
  std::printf("{\"noop_apply_%d\": %.9g, \"md5_end_to_end_%d\": %.9g, \"md5_plain_loop\": %.9g}\n", n, noop_s, n,
              md5_s, plain_s);
  return 0;
}
