// bench_memory — one workload under tessera's memory limit (or none), in a
// process of its own so that its peak RSS is its own; bench/memory/run.sh runs
// each workload unbounded, limited, and under dask's threaded scheduler.
//
//   bench_memory WORKLOAD [--limit BYTES] [--workers N] [--scale S]
//
// Workloads (--scale multiplies the sizes):
//   transpose  z = x + x.T over a float64 (n, n) array in (b, b) blocks, as block
//              (i, j) + block (j, i) transposed; every block of z requested
//   rechunk    a (n, n) float64 array from row blocks to column blocks by the
//              `tasks` method, not fused (split views, then merges): all-to-all
//   tree       a tree sum over 24 x scale (2048, 2048) float64 blocks (32 MiB
//              each), every block requested besides the sum
// Prints one JSON line: workload, limit, peak held bytes, peak RSS, spilled bytes,
// reloads, seconds, and whether the result was right.
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/scheduler/get.hpp"
#include "allocators.hpp"

namespace ta = tessera::array;
using tessera::Graph;
using tessera::Key;

namespace {

struct Options {
  std::string workload;
  size_t limit = 0;
  int workers = 2;
  double scale = 1.0;
};

// The process's peak RSS since the last reset_peak_rss() (Linux's VmHWM), else
// since it started (getrusage).
size_t peak_rss_bytes() {
  if (FILE* f = std::fopen("/proc/self/status", "r")) {
    char line[256];
    size_t kib = 0;
    while (std::fgets(line, sizeof line, f) != nullptr) {
      if (std::sscanf(line, "VmHWM: %zu kB", &kib) == 1) break;
    }
    std::fclose(f);
    if (kib > 0) return kib * 1024;
  }
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<size_t>(u.ru_maxrss) * 1024;
}

// Starts the peak over at the current RSS, so that the figure is the measured
// run's alone, not the reference pass's before it (dask's peer measures its run
// first and checks after). Linux: writing 5 to clear_refs resets VmHWM.
void reset_peak_rss() {
  if (FILE* f = std::fopen("/proc/self/clear_refs", "w")) {
    std::fputs("5", f);
    std::fclose(f);
  }
}

// Sums of a block's elements weighted by position: sum v, sum v * (r * n + c),
// and sum v * (r + c), with (r, c) the element's place in the whole (., n) array.
struct Sums {
  double plain = 0, linear = 0, diagonal = 0;
  Sums& operator+=(const Sums& o) {
    plain += o.plain;
    linear += o.linear;
    diagonal += o.diagonal;
    return *this;
  }
};

Sums block_sums(const ta::NDArray& a, int64_t r0, int64_t c0, int64_t n) {
  const ta::NDArray c = a.is_c_contiguous() ? a : a.copy();
  const double* p = c.data<const double>();
  const int64_t rows = c.shape()[0], cols = c.shape()[1];
  Sums s;
  for (int64_t i = 0; i < rows; ++i) {
    double plain = 0, weighted = 0;
    for (int64_t j = 0; j < cols; ++j) {
      plain += p[i * cols + j];
      weighted += p[i * cols + j] * static_cast<double>(c0 + j);
    }
    const double r = static_cast<double>(r0 + i);
    s.plain += plain;
    s.linear += plain * r * static_cast<double>(n) + weighted;
    s.diagonal += plain * r + weighted;
  }
  return s;
}

// Adds, per block of `x` (the graph of its blocks), a task `prefix-sums` with
// the block's Sums; returns their keys.
std::vector<Key> add_block_sums(Graph& g, const ta::Array& x, const std::string& prefix) {
  const ta::Chunks& ch = x.chunks();
  const int64_t n = x.shape()[1];
  std::vector<Key> keys;
  const auto nb = x.numblocks();
  for (int64_t i = 0; i < nb[0]; ++i) {
    for (int64_t j = 0; j < nb[1]; ++j) {
      const int64_t r0 = ch.offsets(0)[static_cast<size_t>(i)], c0 = ch.offsets(1)[static_cast<size_t>(j)];
      Key k(prefix + "-sums", {i, j});
      g.task(k, tessera::fn("block_sums", [r0, c0, n](const ta::NDArray& a) { return block_sums(a, r0, c0, n); }),
             tessera::ref(x.block_key({i, j})));
      keys.push_back(k);
    }
  }
  return keys;
}

Sums total_of(const tessera::Result& r) {
  Sums s;
  for (const tessera::Result& item : r.items()) s += item.as<Sums>();
  return s;
}

bool close(double a, double b) { return std::abs(a - b) <= 1e-9 * std::max({std::abs(a), std::abs(b), 1.0}); }

struct Outcome {
  bool correct = false;
  size_t rss = 0;  // peak RSS when the run ended (0: at exit)
  tessera::RunStats stats;
  double seconds = 0;
};

template <class F>
Outcome timed_run(const Options& o, F&& body) {
  Outcome out;
  tessera::GetOptions opts;
  opts.num_workers = o.workers;
  opts.memory_limit = o.limit;
  opts.stats = &out.stats;
  reset_peak_rss();
  const auto t0 = std::chrono::steady_clock::now();
  out.correct = body(opts);
  out.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return out;
}

// Reference sums of x without holding it: each block is summed as it is made.
Sums reference(const ta::Array& x, int workers) {
  Graph g = x.graph();
  const std::vector<Key> keys = add_block_sums(g, x, "reference");
  return total_of(tessera::get(g, tessera::Keys(keys), {.num_workers = workers}));
}

Outcome transpose(const Options& o) {
  const int64_t b = std::max<int64_t>(64, static_cast<int64_t>(2048 * o.scale)), nb = 8, n = nb * b;
  const ta::Array x = ta::random({n, n}, {b, b}, 1);
  const Sums want = reference(x, o.workers);
  size_t rss_at_end = 0;
  Outcome out = timed_run(o, [&](const tessera::GetOptions& opts) {
    Graph layer;
    for (int64_t i = 0; i < nb; ++i) {
      for (int64_t j = 0; j < nb; ++j) {
        layer.task(Key("z", {i, j}), tessera::fn("add_transposed", [](const ta::NDArray& a, const ta::NDArray& bt) {
                     // a + bt.T tile by tile, reading bt across: a transposed copy of bt
                     // would be a block-sized temporary that no budget sees.
                     const ta::NDArray ac = a.is_c_contiguous() ? a : a.copy();
                     const ta::NDArray bc = bt.is_c_contiguous() ? bt : bt.copy();
                     const int64_t rows = a.shape()[0], cols = a.shape()[1];
                     ta::NDArray out = ta::NDArray::empty(a.dtype(), a.shape());
                     const double* pa = ac.data<const double>();
                     const double* pb = bc.data<const double>();
                     double* po = out.data<double>();
                     constexpr int64_t kTile = 64;
                     for (int64_t r0 = 0; r0 < rows; r0 += kTile) {
                       for (int64_t c0 = 0; c0 < cols; c0 += kTile) {
                         for (int64_t r = r0; r < std::min(r0 + kTile, rows); ++r) {
                           for (int64_t c = c0; c < std::min(c0 + kTile, cols); ++c) {
                             po[r * cols + c] = pa[r * cols + c] + pb[c * rows + r];
                           }
                         }
                       }
                     }
                     return out;
                   }),
                   tessera::ref(x.block_key({i, j})), tessera::ref(x.block_key({j, i})));
      }
    }
    const ta::Array z("z", x.chunks(), x.dtype(), std::move(layer), {x});
    // Every block of z is requested (as computing z does): the checks read them
    // after the run, so the peak RSS is taken first.
    const tessera::Result r = tessera::get(z.graph(), tessera::Keys(z.keys()), opts);
    rss_at_end = peak_rss_bytes();
    Sums got;
    const auto ks = z.keys();
    for (size_t k = 0; k < ks.size(); ++k) {
      const int64_t i = ks[k].index()[0], j = ks[k].index()[1];
      got += block_sums(r[k].as<ta::NDArray>(), i * b, j * b, n);
    }
    // z = x + x.T: sum z = 2 sum x; sum z(r,c) (r n + c) = sum x(r,c) (r + c)(n + 1).
    return close(got.plain, 2 * want.plain) && close(got.linear, want.diagonal * static_cast<double>(n + 1));
  });
  out.rss = rss_at_end;
  return out;
}

Outcome rechunk(const Options& o) {
  const int64_t n = std::max<int64_t>(256, static_cast<int64_t>(12288 * o.scale)), b = n / 16;
  const ta::Array x = ta::random({n, n}, {b, n}, 2);
  const Sums want = reference(x, o.workers);
  size_t rss_at_end = 0;
  Outcome out = timed_run(o, [&](const tessera::GetOptions& opts) {
    // No intermediate chunking larger than a block: one all-to-all step.
    const ta::Array y = ta::rechunk(x, {n, b}, {.method = ta::RechunkMethod::tasks, .block_size_limit = b * n * 8, .fuse = false});
    Graph g = y.graph();
    const std::vector<Key> keys = add_block_sums(g, y, "y");
    const Sums got = total_of(tessera::get(g, tessera::Keys(keys), opts));
    rss_at_end = peak_rss_bytes();
    return close(got.plain, want.plain) && close(got.linear, want.linear);
  });
  out.rss = rss_at_end;
  return out;
}

Outcome tree(const Options& o) {
  // Blocks stay 32 MiB; --scale changes how many.
  const int64_t side = 2048, blocks = std::max<int64_t>(4, static_cast<int64_t>(24 * o.scale));
  const ta::Array x = ta::random({blocks * side, side}, {side, side}, 3);
  size_t rss_at_end = 0;
  Outcome out = timed_run(o, [&](const tessera::GetOptions& opts) {
    const ta::Array s = ta::sum(x);
    Graph g = s.graph();
    std::vector<Key> keys = x.keys();
    keys.push_back(s.keys().front());
    const tessera::Result r = tessera::get(g, tessera::Keys(keys), opts);
    rss_at_end = peak_rss_bytes();
    // Checking reads every returned block (mapped ones too): after the peak is taken.
    double blocks_total = 0;
    for (size_t i = 0; i + 1 < keys.size(); ++i) blocks_total += block_sums(r[i].as<ta::NDArray>(), 0, 0, 1).plain;
    const ta::NDArray total = r[keys.size() - 1].as<ta::NDArray>();
    return close(total.at<double>({}), blocks_total);
  });
  out.rss = rss_at_end;
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  if (argc < 2) throw std::invalid_argument("usage: bench_memory transpose|rechunk|tree [--limit BYTES] [--workers N] [--scale S]");
  o.workload = argv[1];
  for (int i = 2; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
    const std::string v = argv[++i];
    if (a == "--limit") o.limit = std::stoull(v);
    else if (a == "--workers") o.workers = std::stoi(v);
    else if (a == "--scale") o.scale = std::stod(v);
    else throw std::invalid_argument("unknown option " + a);
  }
  return o;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  // As `tessera rechunk --max-mem` and `tessera graph run --memory-limit` do: a
  // process that promises a peak holds its allocators to the budget too.
  if (o.limit > 0) tessera::tool::bound_allocators(static_cast<int64_t>(o.limit));
  Outcome r;
  if (o.workload == "transpose") r = transpose(o);
  else if (o.workload == "rechunk") r = rechunk(o);
  else if (o.workload == "tree") r = tree(o);
  else throw std::invalid_argument("unknown workload " + o.workload + ": expected transpose, rechunk or tree");
  const size_t rss = r.rss > 0 ? r.rss : peak_rss_bytes();
  std::printf(
      "{\"workload\": \"%s\", \"limit\": %zu, \"peak_held_bytes\": %zu, \"peak_rss\": %zu, \"spilled_bytes\": %zu, "
      "\"spills\": %zu, \"reloads\": %zu, \"seconds\": %.3f, \"correct\": %s}\n",
      o.workload.c_str(), o.limit, r.stats.peak_held_bytes, rss, r.stats.spilled_bytes, r.stats.spill_count,
      r.stats.reload_count, r.seconds, r.correct ? "true" : "false");
  return r.correct ? 0 : 1;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_memory: %s\n", e.what());
  return 2;
}
