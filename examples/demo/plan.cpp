#include "plan.hpp"

#include <algorithm>
#include <cstdio>
#include <vector>

#include "spectrum.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/rechunk/exchange.hpp"

namespace demo {
namespace {

namespace ta = tessera::array;

// Blocks [0, n) of one name go to ranks in contiguous runs (tessera/across/placement.hpp).
int owner(int64_t block, int64_t n, int ranks) { return static_cast<int>(block * ranks / n); }

// The radial sums' tree: level 0 has `leaves` partials, each next level adds up groups of 8.
std::vector<int64_t> tree_levels(int64_t leaves) {
  std::vector<int64_t> levels{leaves};
  while (levels.back() > 1) levels.push_back((levels.back() + 7) / 8);
  return levels;
}

}  // namespace

Geometry geometry(const Settings& s, int64_t rows, int64_t cols) {
  Geometry g{rows, cols};
  // A worker holds about two blocks (in and out) plus the FFT's panel; room for
  // 2 x workers + 8 blocks leaves the scheduler's ready results and the partials space.
  g.block_bytes = s.max_mem / (4 * s.workers + 8);
  g.row_block = std::clamp<int64_t>(g.block_bytes / (cols * 8), 1, rows);  // complex64 rows
  g.spectrum_cols = cols / 2 + 1;
  // Column blocks of near-equal width: cols / 2 + 1 columns (the Nyquist one
  // makes the count odd) would otherwise leave a last block one column wide.
  const int64_t col_target = std::clamp<int64_t>(g.block_bytes / (rows * 8), 1, g.spectrum_cols);
  const int64_t col_blocks = (g.spectrum_cols + col_target - 1) / col_target;
  g.col_block = (g.spectrum_cols + col_blocks - 1) / col_blocks;
  return g;
}

std::pair<int64_t, int64_t> image_shape(int64_t size) {
  int64_t cols = 1;
  while (cols * cols * 4 < size) cols *= 2;
  return {std::max<int64_t>(size / (4 * cols), 16), cols};
}

int dry_run(const Settings& s) {
  constexpr double kMiB = 1.0 / (1 << 20);
  const auto [rows, cols] = image_shape(s.size);
  const Geometry g = geometry(s, rows, cols);
  const int P = s.ranks;
  const int64_t row_blocks = (rows + g.row_block - 1) / g.row_block;
  const int64_t col_blocks = (g.spectrum_cols + g.col_block - 1) / g.col_block;
  std::printf(
      "demo --dry-run: image %lld x %lld float32 (%.0f MiB) on %d ranks x %d workers, max-mem %.0f MiB per rank\n",
      static_cast<long long>(rows), static_cast<long long>(cols), static_cast<double>(rows * cols * 4) * kMiB, P,
      s.workers, static_cast<double>(s.max_mem) * kMiB);
  std::printf("blocks of %lld rows (%.1f MiB of complex64), spectrum blocks of %lld columns (%.1f MiB)\n",
              static_cast<long long>(g.row_block), static_cast<double>(g.row_block * g.spectrum_cols * 8) * kMiB,
              static_cast<long long>(g.col_block), static_cast<double>(rows * g.col_block * 8) * kMiB);
  const int64_t rows_per_rank = (row_blocks + P - 1) / P, cols_per_rank = (col_blocks + P - 1) / P;
  std::printf("\n1. generate: %lld row blocks, at most %lld per rank, each written by its rank into image.zarr; "
              "nothing sent between ranks; peak per rank ~ %d workers x 2 blocks = %.0f MiB\n",
              static_cast<long long>(row_blocks), static_cast<long long>(rows_per_rank), s.workers,
              static_cast<double>(2 * s.workers * g.row_block * cols * 4) * kMiB);
  std::printf("\n2. FFT rows + rechunk rows -> columns across ranks (rechunk_store's exchange):\n");
  const ta::Chunks from = ta::normalize_chunks({g.row_block, -1}, {rows, g.spectrum_cols});
  const ta::Chunks to = ta::normalize_chunks({-1, g.col_block}, {rows, g.spectrum_cols});
  const ta::ExchangeOptions options = ta::exchange_options(static_cast<size_t>(s.max_mem), P, s.workers);
  ta::print_exchange_plan(stdout, from, to, ta::DType::complex64(), options,
                          ta::plan_exchange(from.sizes(), to.sizes(), 8, options));
  // Step 3: the leaves go with their column blocks; a partial moves when its parent is on another rank.
  const std::vector<int64_t> levels = tree_levels(col_blocks);
  const auto radial_bytes = static_cast<int64_t>(binning_of(rows, cols).bins * 2 * sizeof(double));
  std::vector<int64_t> sent(static_cast<size_t>(P), 0), received(static_cast<size_t>(P), 0);
  for (size_t d = 0; d + 1 < levels.size(); ++d) {
    for (int64_t i = 0; i < levels[d]; ++i) {
      const int from_rank = owner(i, levels[d], P), to_rank = owner(i / 8, levels[d + 1], P);
      if (from_rank == to_rank) continue;
      sent[static_cast<size_t>(from_rank)] += radial_bytes;
      received[static_cast<size_t>(to_rank)] += radial_bytes;
    }
  }
  std::printf("\n3. FFT columns + radial sums: %lld column blocks, at most %lld per rank, read by their rank; "
              "%zu levels of partial sums of %.1f MiB each; per rank at most %.1f MiB sent, %.1f MiB received; "
              "peak per rank ~ %d workers x 2 blocks = %.0f MiB\n",
              static_cast<long long>(col_blocks), static_cast<long long>(cols_per_rank), levels.size(),
              static_cast<double>(radial_bytes) * kMiB,
              static_cast<double>(*std::max_element(sent.begin(), sent.end())) * kMiB,
              static_cast<double>(*std::max_element(received.begin(), received.end())) * kMiB, s.workers,
              static_cast<double>(2 * s.workers * rows * g.col_block * 8) * kMiB);
  return 0;
}

}  // namespace demo
