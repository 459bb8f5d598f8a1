// tessera's side of bench/algebra/run.sh: matmul, map_overlap (3 x 3 mean),
// cumsum, where and argmax on in-memory arrays, timed from the graph's build to
// the result assembled in one NDArray (what `compute()` gives a user).
//
// Usage: bench_algebra SCALE REPEATS WORKERS [OPS]
//   SCALE divides every extent and block size (1: the sizes); OPS, a
//   comma-separated list of operations, runs only those (for perf record).
// Prints one line per operation, which bench/peers/algebra_dask.py prints too:
//   matmul tessera best=12.3 median=12.5 check=1.2345e+10
// `check` is the float64 sum of the result (of the indices for argmax): both
// sides build the same inputs from one formula, so the checks must agree.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <string>
#include <type_traits>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/array/ops/logic.hpp"
#include "tessera/array/ops/overlap.hpp"
#include "tessera/array/ops/scan.hpp"
#include "kernels.hpp"

namespace ta = tessera::array;

namespace {

// The input both sides use: x[i, j] = ((7919 i + 104729 j) mod 1009) / 1009,
// spread so that rows and columns differ and argmax has few ties.
template <class T>
ta::NDArray formula_block(std::span<const int64_t> offset, const ta::Shape& shape) {
  ta::NDArray b = ta::NDArray::empty(ta::dtype_of<T>, shape);
  T* p = b.data<T>();
  for (int64_t i = 0; i < shape[0]; ++i) {
    for (int64_t j = 0; j < shape[1]; ++j) {
      const int64_t v = ((offset[0] + i) * 7919 + (offset[1] + j) * 104729) % 1009;
      *p++ = static_cast<T>(static_cast<double>(v) / 1009.0);
    }
  }
  return b;
}

// An (n, n) array of the formula whose blocks are already in memory (as dask's
// `persist()` leaves them): its tasks are literals, so timing covers only the operation.
template <class T>
ta::Array persisted(const std::string& name, int64_t n, int64_t block) {
  const ta::Chunks chunks = ta::normalize_chunks(block, {n, n});
  tessera::Graph layer;
  ta::for_each_block(chunks, [&](std::span<const int64_t> idx) {
    const std::vector<int64_t> index(idx.begin(), idx.end());
    layer.put(tessera::Key(name, idx), tessera::Value(formula_block<T>(chunks.block_offset(index),
                                                                       chunks.block_shape(index))));
  });
  return ta::Array(name, chunks, ta::dtype_of<T>, std::move(layer));
}

// The user's kernel: the mean of each element's 3 x 3 neighbourhood. The
// extended block's outer ring is trimmed off by map_overlap, so it is left 0.
ta::NDArray mean3x3(const ta::NDArray& block) {
  const ta::NDArray b = ta::c_contiguous(block);
  const int64_t h = b.shape()[0], w = b.shape()[1];
  ta::NDArray out = ta::NDArray::zeros(b.dtype(), b.shape());
  const float* x = b.data<const float>();
  float* o = out.data<float>();
  for (int64_t i = 1; i + 1 < h; ++i) {
    const float *up = x + (i - 1) * w, *mid = up + w, *down = mid + w;
    float* r = o + i * w;
    for (int64_t j = 1; j + 1 < w; ++j) {
      r[j] = (up[j - 1] + up[j] + up[j + 1] + mid[j - 1] + mid[j] + mid[j + 1] + down[j - 1] + down[j] + down[j + 1]) /
             9.0f;
    }
  }
  return out;
}

double checksum(const ta::NDArray& r) {
  const ta::NDArray c = ta::c_contiguous(r);
  const int64_t n = c.size();
  double s = 0;
  ta::dispatch(c.dtype(), [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T>) {
      const T* p = c.data<const T>();
      for (int64_t i = 0; i < n; ++i) s += static_cast<double>(p[i]);
    }
  });
  return s;
}

// The operations to run: all, or those named in argv[4].
std::string wanted;

bool runs(const char* name) {
  return wanted.empty() || ("," + wanted + ",").find(std::string(",") + name + ",") != std::string::npos;
}

// Rows that run only when OPS names them (bench/kernels/run.sh's).
bool named(const char* name) { return !wanted.empty() && runs(name); }

void measure(const char* name, int repeats, int workers, const std::function<ta::Array()>& build) {
  if (!runs(name)) return;
  std::vector<double> times;
  double check = 0;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    const ta::NDArray out = build().compute({.num_workers = workers});
    times.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
    check = checksum(out);
  }
  // Each run's time in order too: the first run of a fresh process pays for its fresh memory.
  std::string runs;
  for (double t : times) runs += (runs.empty() ? "" : ",") + std::to_string(t);
  std::sort(times.begin(), times.end());
  std::printf("%s tessera best=%.4f median=%.4f check=%.10e runs=%s\n", name, times.front(), times[times.size() / 2],
              check, runs.c_str());
  std::fflush(stdout);
}

// The block kernel behind cumsum, which is hand-written (design rule: only
// where it beats the Eigen expression by 1.2x or more): tessera's scan of one
// (n, n) float32 block along axis 0 (a one-block array computes to that block)
// beside Eigen's TensorScanOp on the same data, best of `repeats`, one thread.
void cumsum_kernel(int64_t n, int repeats) {
  const ta::Array one = persisted<float>("one", n, n);
  const ta::NDArray block = one.compute();
  ta::NDArray out = ta::NDArray::empty(ta::DType::float32(), {n, n});
  ta::NDArray mine;
  const double t_tessera = best_of(repeats, [&] { mine = ta::cumsum(one, 0).compute({.num_workers = 1}); });
  const double t_eigen = best_of(repeats, [&] { out.tensor<float, 2>() = block.tensor<const float, 2>().cumsum(0); });
  std::printf("kernel cumsum_block_%lld tessera=%.6f eigen=%.6f same=%d\n", static_cast<long long>(n), t_tessera,
              t_eigen, ta::array_equal(mine, out) ? 1 : 0);
  std::fflush(stdout);
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 4) {
    std::fprintf(stderr, "usage: %s SCALE REPEATS WORKERS [OPS]\n", argv[0]);
    return 2;
  }
  const int64_t scale = std::atoll(argv[1]);
  const int repeats = std::atoi(argv[2]), workers = std::atoi(argv[3]);
  if (argc > 4) wanted = argv[4];
  if (scale < 1 || repeats < 1 || workers < 1) {
    std::fprintf(stderr, "SCALE, REPEATS and WORKERS must be at least 1\n");
    return 2;
  }
  if (runs("matmul")) {
    const ta::Array a = persisted<double>("a", 8192 / scale, 1024 / scale);
    const ta::Array b = persisted<double>("b", 8192 / scale, 1024 / scale);
    measure("matmul", repeats, workers, [&] { return ta::matmul(a, b); });
  }
  if (named("matmul_f32")) {
    const ta::Array a = persisted<float>("a32", 8192 / scale, 1024 / scale);
    const ta::Array b = persisted<float>("b32", 8192 / scale, 1024 / scale);
    measure("matmul_f32", repeats, workers, [&] { return ta::matmul(a, b); });
  }
  // The float32 array of the other rows is 1 GiB: made only when one of them runs.
  const bool others = runs("map_overlap") || runs("cumsum") || runs("kernel") || runs("where") || runs("argmax");
  if (!others) return 0;
  const ta::Array x = persisted<float>("x", 16384 / scale, 2048 / scale);
  measure("map_overlap", repeats, workers, [&] {
    return ta::map_overlap(mean3x3, x, {.depth = {1, 1}, .boundary = ta::Boundary::reflect});
  });
  measure("cumsum", repeats, workers, [&] { return ta::cumsum(x, 0); });
  if (runs("kernel")) {
    // Milliseconds each on a shared machine: best of at least 10, whatever REPEATS says.
    const int kernel_repeats = std::max(repeats, 10);
    cumsum_kernel(2048 / scale, kernel_repeats);
    print_kernel_rows(persisted<float>("k32", 2048 / scale, 2048 / scale),
                      persisted<double>("k64", 2048 / scale, 2048 / scale), kernel_repeats);
  }
  const ta::Array zero = ta::from_ndarray(ta::NDArray::zeros(ta::DType::float32(), {}));
  measure("where", repeats, workers, [&] { return ta::where(ta::greater(x, ta::Scalar(0.5f)), x, zero); });
  measure("argmax", repeats, workers, [&] { return ta::argmax(x, {.axis = {0}, .split_every = 8}); });
  return 0;
}
