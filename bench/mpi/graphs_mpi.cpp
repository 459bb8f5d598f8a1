// bench_graphs_mpi: one workload of `scripts/bench mpi graphs` (bench/mpi/graphs.sh)
// as one rank of an mpirun job, every rank computing its share through
// GetOptions::communicator (tessera::mpi::get underneath), one worker per rank.
//
//   mpirun -n 4 bench_graphs_mpi fft IMAGE.zarr COLUMNS LIMIT
//       sum(|fft(rechunk(rfft(x, rows), (-1, COLUMNS)), cols)|^2), the rechunk's
//       intermediate blocks at most LIMIT bytes (dask's block_size_limit)
//   mpirun -n 4 bench_graphs_mpi standardize X.zarr OUT.zarr
//       z = (x - x.mean(0)) / x.std(0) stored to OUT.zarr by every rank
//       (ta::store across ranks); the value is sum(z^2) read back from OUT.zarr
//   mpirun -n 4 bench_graphs_mpi matmul X.zarr            sum(x @ x.T)
//   mpirun -n 4 bench_graphs_mpi graph FILE.json          the graph file's outputs
//   ... --max-mem BYTES (last): each rank's GetOptions::memory_limit (fft: and the
//       rechunk's fused_task_limit, which bounds its tasks and intermediate blocks)
//
// Each array workload ends in a sum computed across the ranks (the value on rank
// 0 is the check against dask's); standardize ends in its store, and its sum is
// read back from the store after the timed stretch. Rank 0 prints one JSON line:
// the workload, the ranks, the seconds from a barrier before the graph is built
// to the value on rank 0 (standardize: to the store published), the tasks of the graph, and the ranks' figures summed (CPU seconds
// over the same stretch and peak RSS, from getrusage; bytes and messages sent, time waiting on the network); the figures
// of every rank travel by the communicator's allgather.
#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <complex>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/array/ops/map_blocks.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/mpi/communicator.hpp"
#include "tessera/mpi/environment.hpp"
#include "tessera/scheduler/get.hpp"

namespace ta = tessera::array;

namespace {

using Clock = std::chrono::steady_clock;

// What one workload gives back: the value checked against dask's and the tasks it ran.
struct Outcome {
  double value = 0;
  size_t tasks = 0;
};

Outcome sum_across(const ta::Array& x, const tessera::GetOptions& options) {
  const ta::Array s = ta::sum(x);
  const size_t tasks = s.graph().size();
  const ta::NDArray v = ta::astype(s, ta::DType::float64()).compute(options);
  return {v.has_value() ? v.data<double>()[0] : 0.0, tasks};
}

// The 2-D FFT as dask does it (ta::rfft2's steps, with the column blocks named):
// rfft along the rows, a rechunk to blocks of whole columns, fft down them.
Outcome fft(const std::string& path, int64_t columns, int64_t limit, const tessera::GetOptions& options) {
  const ta::Array x = ta::from_zarr(path);
  const ta::Array rows = ta::rfft(x, {.axis = 1});
  // The tasks method: the automatic choice here is the shuffle, whose shared
  // scratch buffer lives in one process and has no wire form to travel between
  // ranks. Under --max-mem the rechunk is told the limit, as a user would: no
  // task it plans then needs more than the run allows (fused_task_limit).
  const ta::RechunkOptions rechunk{.method = ta::RechunkMethod::tasks, .block_size_limit = limit,
                                   .fused_task_limit = static_cast<int64_t>(options.memory_limit)};
  const ta::Array f = ta::fft(ta::rechunk(rows, {-1, columns}, rechunk), {.axis = 0});
  const ta::Array power = ta::map_blocks<std::complex<float>, 2>(
      [](auto b) { return b.abs().square().template cast<double>(); }, f);
  return sum_across(power, options);
}

// The store, timed; the sum of squares read back from it is the check against
// dask's store (computed after the timed stretch, by `check`).
Outcome standardize(const std::string& path, const std::string& out, const tessera::GetOptions& options) {
  const ta::Array x = ta::from_zarr(path);
  const ta::Array z = (x - ta::mean(x, {.axis = {0}})) / ta::std(x, {.axis = {0}});
  ta::store(z, out, {.compute = options, .zarr = {.codec = "blosc:lz4:5:shuffle"}});  // the inputs' codec, as dask's to_zarr writes
  return {0.0, z.graph().size() + static_cast<size_t>(z.chunks().total_blocks())};  // + a store task per block
}

double stored_sum_of_squares(const std::string& out, const tessera::GetOptions& options) {
  const ta::Array z = ta::from_zarr(out);
  return sum_across(z * z, options).value;
}

Outcome matmul(const std::string& path, const tessera::GetOptions& options) {
  const ta::Array x = ta::from_zarr(path);
  return sum_across(ta::matmul(x, ta::transpose(x)), options);
}

Outcome graph(const std::string& path, const tessera::GetOptions& options) {
  const tessera::GraphFile f = tessera::load_graph_file(path);
  tessera::barrier(*options.communicator);  // every rank loaded: time the run alone
  const auto start = Clock::now();
  (void)tessera::get(f.graph, tessera::Keys(f.outputs), options);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return {seconds, f.compiled.size()};  // the value is the run's time: the load is not scheduling
}

rusage usage() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return u;
}

double cpu_seconds(const rusage& u) {
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) + 1e-6 * static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec);
}

int64_t sum_over_ranks(tessera::Communicator& comm, int64_t v) {
  int64_t total = 0;
  for (const int64_t x : comm.allgather(v)) total += x;
  return total;
}

int run(int argc, char** argv) {
  const tessera::mpi::Environment mpi(argc, argv);
  const auto comm = tessera::mpi::world_communicator();
  if (argc < 3) {
    if (comm->rank() == 0)
      std::fprintf(stderr, "usage: bench_graphs_mpi fft IMAGE.zarr COLUMNS LIMIT | standardize X.zarr OUT.zarr | matmul X.zarr | graph FILE.json\n");
    return 2;
  }
  const std::string what = argv[1], path = argv[2];
  tessera::RunStats stats;
  tessera::GetOptions options{.num_workers = 1, .stats = &stats};
  // A trailing `--max-mem BYTES`: each rank's memory_limit (results held, spilled past it).
  if (argc >= 5 && std::string(argv[argc - 2]) == "--max-mem") {
    options.memory_limit = std::stoull(argv[argc - 1]);
    argc -= 2;
  }
  options.communicator = comm;

  tessera::barrier(*comm);
  const auto start = Clock::now();
  const double cpu_start = cpu_seconds(usage());
  Outcome out;
  if (what == "fft" && argc >= 5) {
    out = fft(path, std::stoll(argv[3]), std::stoll(argv[4]), options);
  } else if (what == "standardize" && argc >= 4) {
    out = standardize(path, argv[3], options);
  } else if (what == "matmul") {
    out = matmul(path, options);
  } else if (what == "graph") {
    out = graph(path, options);
  } else {
    if (comm->rank() == 0) {
      std::fprintf(stderr, "bench_graphs_mpi: unknown workload '%s' (or missing COLUMNS LIMIT for fft, OUT.zarr for standardize)\n",
                   what.c_str());
    }
    return 2;
  }
  const double seconds = what == "graph" ? out.value : std::chrono::duration<double>(Clock::now() - start).count();

  const rusage end = usage();
  const int64_t rss_kib = sum_over_ranks(*comm, end.ru_maxrss);
  const int64_t cpu_us = sum_over_ranks(*comm, std::llround((cpu_seconds(end) - cpu_start) * 1e6));
  const int64_t bytes_sent = sum_over_ranks(*comm, static_cast<int64_t>(stats.bytes_sent));
  const int64_t messages = sum_over_ranks(*comm, static_cast<int64_t>(stats.messages_sent));
  const int64_t wait_us = sum_over_ranks(*comm, std::llround(stats.network_wait_seconds * 1e6));
  const int64_t held = sum_over_ranks(*comm, static_cast<int64_t>(stats.peak_held_bytes));
  const int64_t rank_held = sum_over_ranks(*comm, static_cast<int64_t>(stats.peak_rank_bytes));
  const int64_t spilled = sum_over_ranks(*comm, static_cast<int64_t>(stats.spilled_bytes));
  if (what == "standardize") out.value = stored_sum_of_squares(argv[3], options);  // after the timed stretch and its figures
  if (comm->rank() == 0) {
    std::printf("{\"workload\": \"%s\", \"ranks\": %d, \"seconds\": %.6f, \"cpu_s\": %.3f, \"tasks\": %zu, \"value\": %.17g, "
                "\"rss_mib\": %.1f, \"peak_held_mib\": %.1f, \"peak_rank_mib\": %.1f, \"spilled_mib\": %.1f, \"bytes_sent\": %lld, "
                "\"messages_sent\": %lld, \"network_wait_s\": %.3f}\n",
                what.c_str(), comm->size(), seconds, static_cast<double>(cpu_us) / 1e6, out.tasks, what == "graph" ? 0.0 : out.value,
                static_cast<double>(rss_kib) / 1024, static_cast<double>(held) / (1 << 20), static_cast<double>(rank_held) / (1 << 20),
                static_cast<double>(spilled) / (1 << 20), static_cast<long long>(bytes_sent),
                static_cast<long long>(messages), static_cast<double>(wait_us) / 1e6);
    std::fflush(stdout);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const std::exception& e) {
    std::fprintf(stderr, "bench_graphs_mpi: %s\n", e.what());
    return 1;
  }
}
