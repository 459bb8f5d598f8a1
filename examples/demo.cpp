// demo — tessera's main job in one page: a task graph over generated data, run on
// every core by `get`, holding only a few chunks at a time.
//
// 64 chunks of 1M random doubles (512 MiB in all) are generated; each is reduced to
// its moments (count, sum, sum of squares), and the moments are combined into the
// mean and the standard deviation. A chunk is released as soon as its moments are
// computed, and `order` runs the reductions early, so the run holds a handful of
// chunks at once, not all 64.
//
//   build/examples/demo [CHUNKS]
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <vector>

#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/get.hpp"

struct Moments {
  double count = 0, sum = 0, sum_squares = 0;
};

// One chunk of uniform random numbers in [0, 1): the "data" a real job would load.
std::vector<double> generate(int64_t seed, int64_t size) {
  std::mt19937_64 rng(seed);
  std::uniform_real_distribution<double> uniform(0.0, 1.0);
  std::vector<double> xs(size);
  for (double& x : xs) x = uniform(rng);
  return xs;
}

Moments moments(const std::vector<double>& xs) {
  Moments m;
  for (double x : xs) {
    m.count += 1;
    m.sum += x;
    m.sum_squares += x * x;
  }
  return m;
}

Moments combine(const std::vector<Moments>& parts) {
  Moments total;
  for (const Moments& m : parts) {
    total.count += m.count;
    total.sum += m.sum;
    total.sum_squares += m.sum_squares;
  }
  return total;
}

int main(int argc, char** argv) {
  const int64_t chunks = argc > 1 ? std::atoll(argv[1]) : 64;
  const int64_t chunk_size = 1 << 20;

  // The graph: data_i -> moments_i for every chunk, all moments -> total.
  // Building it runs nothing.
  tessera::Graph g;
  tessera::ArgList parts;
  for (int64_t i = 0; i < chunks; ++i) {
    g.task(tessera::Key("data", {i}), generate, i, chunk_size);
    g.task(tessera::Key("moments", {i}), moments, tessera::ref("data", {i}));
    parts.items.emplace_back(tessera::ref("moments", {i}));
  }
  g.task("total", combine, parts);

  // Run it on every core; `stats` receives the memory the results held.
  tessera::RunStats stats;
  tessera::GetOptions options;
  options.stats = &stats;
  const auto total = tessera::get(g, "total", options).as<Moments>();

  const double mean = total.sum / total.count;
  const double sd = std::sqrt(total.sum_squares / total.count - mean * mean);
  const double mib = 1.0 / (1 << 20);
  std::printf("mean %.6f  standard deviation %.6f  over %.0f numbers (uniform: 0.5, 0.288675)\n", mean, sd,
              total.count);
  std::printf("%zu tasks on %d workers; generated %.0f MiB, held at most %zu results = %.1f MiB\n", stats.tasks,
              stats.num_workers, chunks * chunk_size * sizeof(double) * mib, stats.peak_held,
              stats.peak_held_bytes * mib);
  return 0;
}
