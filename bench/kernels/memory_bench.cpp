// The memory-bound rows of bench/kernels/run.sh: a STREAM-style triad (the
// bandwidth limit, measured in the same run) beside tessera's sum, mean and std
// of a float32 array already in memory and the element-wise (x - mean) / std.
//
// Bytes counted as STREAM counts them (what the operation must move, not the
// write-allocate reads): triad 12 per element (reads b and c, writes a), a
// reduction 4 (reads x once), the element-wise 8 (reads x, writes the result).
//
// Usage: bench_kernels_memory GIB REPEATS WORKERS
// Prints: <row> <who> threads=2 best=<s> gbps=<GB/s> check=<value>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <span>
#include <thread>
#include <vector>

#include <tessera/tessera.hpp>

namespace ta = tessera::array;

namespace {

double best_of(int repeats, const std::function<void()>& run) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    run();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

// Runs f(begin, end) over [0, n) split evenly across `workers` threads.
void parallel(int64_t n, int workers, const std::function<void(int64_t, int64_t)>& f) {
  std::vector<std::thread> threads;
  for (int w = 0; w < workers; ++w) threads.emplace_back(f, n * w / workers, n * (w + 1) / workers);
  for (auto& t : threads) t.join();
}

void print(const char* row, const char* who, int workers, double seconds, double bytes, double check) {
  std::printf("%s %s threads=%d best=%.4f gbps=%.2f check=%.8e\n", row, who, workers, seconds, bytes / seconds / 1e9,
              check);
  std::fflush(stdout);
}

// STREAM's triad a = b + s c on float32 arrays of n elements each, each thread on its own part
// (first touched by that thread, as STREAM's OpenMP loops do).
void triad(int64_t n, int repeats, int workers) {
  std::unique_ptr<float[]> a(new float[n]), b(new float[n]), c(new float[n]);
  parallel(n, workers, [&](int64_t lo, int64_t hi) {
    for (int64_t i = lo; i < hi; ++i) a[i] = 0, b[i] = 1, c[i] = 2;
  });
  const float s = 3;
  const double t = best_of(repeats, [&] {
    parallel(n, workers, [&](int64_t lo, int64_t hi) {
      float* __restrict pa = a.get();
      const float* __restrict pb = b.get();
      const float* __restrict pc = c.get();
      for (int64_t i = lo; i < hi; ++i) pa[i] = pb[i] + s * pc[i];
    });
  });
  print("triad", "stream", workers, t, 12.0 * static_cast<double>(n), a[n / 2]);
}

// An (n, n) float32 array whose blocks (block^2, C-contiguous) are already in memory,
// as dask's persist() leaves them: its tasks are literals. Filled on `workers` threads.
ta::Array persisted(int64_t n, int64_t block, int workers) {
  const ta::Chunks chunks = ta::normalize_chunks(block, {n, n});
  std::vector<std::vector<int64_t>> index;
  ta::for_each_block(chunks, [&](std::span<const int64_t> idx) { index.emplace_back(idx.begin(), idx.end()); });
  std::vector<ta::NDArray> blocks(index.size());
  parallel(static_cast<int64_t>(index.size()), workers, [&](int64_t lo, int64_t hi) {
    for (int64_t k = lo; k < hi; ++k) {
      const ta::Shape shape = chunks.block_shape(index[k]);
      blocks[k] = ta::NDArray::empty(ta::DType::float32(), shape);
      float* p = blocks[k].data<float>();
      for (int64_t i = 0; i < blocks[k].size(); ++i) p[i] = static_cast<float>(((k + 1) * 7919 * i) % 1009) / 1009.0f;
    }
  });
  tessera::Graph layer;
  for (size_t k = 0; k < index.size(); ++k) layer.put(tessera::Key("x", index[k]), tessera::Value(blocks[k]));
  return ta::Array("x", chunks, ta::DType::float32(), std::move(layer));
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s GIB REPEATS WORKERS\n", argv[0]);
    return 2;
  }
  const double gib = std::atof(argv[1]);
  const int repeats = std::atoi(argv[2]), workers = std::atoi(argv[3]);
  // An (n, n) float32 array of `gib` GiB in blocks of 64 MiB (4096^2), as an image would be cut.
  const auto n = static_cast<int64_t>(std::sqrt(gib * (1 << 30) / 4) / 4096) * 4096;
  const int64_t elements = n * n;
  // The triad's three arrays hold as many bytes as x, so neither fits a cache; freed before x is made.
  triad(elements / 3, repeats, workers);

  const ta::Array x = persisted(n, 4096, workers);
  const ta::ComputeOptions o{.num_workers = workers};
  const double bytes = 4.0 * static_cast<double>(elements);
  double check = 0;
  double t = best_of(repeats, [&] { check = ta::sum(x).compute<double>(o); });
  print("sum", "tessera", workers, t, bytes, check);
  t = best_of(repeats, [&] { check = ta::mean(x).compute<double>(o); });
  print("mean", "tessera", workers, t, bytes, check);
  t = best_of(repeats, [&] { check = ta::std(x).compute<double>(o); });
  print("std", "tessera", workers, t, bytes, check);
  const double m = ta::mean(x).compute<double>(o), s = ta::std(x).compute<double>(o);
  t = best_of(repeats, [&] {
    const ta::NDArray z = ((x - ta::Scalar(m)) / ta::Scalar(s)).compute(o);
    check = static_cast<double>(z.data<const float>()[elements / 2 + 1]);
  });
  print("standardize", "tessera", workers, t, 2 * bytes, check);
  return 0;
}
