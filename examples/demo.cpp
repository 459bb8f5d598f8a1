// demo — tessera's main job: a 2-D FFT of an array larger than the memory it may use.
//
//   build/examples/demo [--size 4GiB] [--max-mem 512MiB] [--workers N] [--codec SPEC] [--dir DIR] [--keep]
//                       [--input IMAGE] [--report REPORT.html]
//   mpirun -n 4 build/examples/demo --size 2GiB      (across the ranks of an mpirun job)
//   build/examples/demo --dry-run --size 10TiB --ranks 64 --workers 16 --max-mem 64GiB
//
// 1. Generates a compressed zarr store of float32 noise plus three plane waves
//    of known frequencies, `--size` bytes, chunked by rows. `--codec` takes the
//    specs of `tessera rechunk --codec` (zarr::Format::codec); the default,
//    blosc lz4 level 5 with byte shuffle, is zarr-python's, and "none" writes
//    raw chunks. The row step decodes each chunk inside its task.
// 2. Transforms it out of core, as a 2-D real FFT: an FFT along each row block
//    (rfft, the n/2 + 1 non-negative frequencies of real rows), whose task writes
//    its shards straight into a second zarr store chunked by columns (the
//    shuffle through the disk: rows -> columns), then an FFT along each column
//    block of that store.
// 3. Takes the power spectrum of each column block and adds it into radial bins
//    (a tree of partial sums), then finds the peaks of the radial average.
//
// It prints the detected frequencies beside the planted ones (and fails when they
// differ), the time of each step, the image store's bytes on disk, the peak RSS
// and the bytes that went through the scratch store. Blocks are sized from
// --max-mem so that the workers' blocks, the FFTs' buffers and the partial sums
// stay under it; the data itself lives in the page cache, not in the process.
// The stores go in a new folder under --dir (default $TMPDIR or /tmp), removed
// at the end unless --keep. `--input` skips step 1 and transforms the
// image.zarr a `--keep` run left (bench/fft times the steps this way); its size
// is the store's, and its waves those the demo plants. `--report` writes one
// HTML page of the three runs (diagnostics/report.hpp), also when one fails.
//
// Under mpirun (built with MPI), the ranks share the work: every rank generates
// and stores its own row blocks of image.zarr (store across ranks, published
// once by rank 0), the rows -> columns step is the rechunk across ranks (rounds
// of all-to-all-v, rechunk/exchange.hpp; each rank reads its row blocks and
// writes its column chunks), and the column step runs each rank's column blocks,
// the partial sums meeting on rank 0. --dir must be a folder every rank sees.
// Only rank 0 prints; --max-mem, --workers are per rank. `--dry-run` prints
// that plan for `--ranks` ranks without computing (and without MPI).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <numbers>
#include <optional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/report.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/spill.hpp"
#include "tessera/array/rechunk/exchange.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/scheduler/get.hpp"
#if TESSERA_DEMO_MPI
#include "tessera/mpi/communicator.hpp"
#include "tessera/mpi/environment.hpp"
#endif

namespace ta = tessera::array;
namespace fs = std::filesystem;

namespace {

struct Settings {
  int64_t size = int64_t{4} << 30;
  int64_t max_mem = int64_t{512} << 20;
  int workers = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  std::string dir;
  bool keep = false;
  std::string input;  // an image.zarr a previous run kept; empty: generate one
  std::string codec = "blosc:lz4:5:shuffle";
  std::string report;  // an HTML report of the three runs; empty: none
  bool dry_run = false;  // print the plan across `ranks` ranks, compute nothing
  int ranks = 1;         // of --dry-run
  bool workers_given = false;
};

[[noreturn]] void usage(const std::string& problem) {
  std::fprintf(stderr,
               "demo: %s\nusage: demo [--size 4GiB] [--max-mem 512MiB] [--workers N] [--codec SPEC] [--dir DIR] [--keep] "
               "[--input IMAGE] [--report REPORT.html] [--dry-run [--ranks N]]\n",
               problem.c_str());
  std::exit(2);
}

Settings parse(int argc, char** argv) {
  Settings s;
  const char* tmp = std::getenv("TMPDIR");
  s.dir = tmp && *tmp ? tmp : "/tmp";
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) usage(a + " needs a value");
      return argv[++i];
    };
    try {
      if (a == "--size") {
        s.size = ta::parse_bytes(value());
      } else if (a == "--max-mem") {
        s.max_mem = ta::parse_bytes(value());
      } else if (a == "--workers") {
        s.workers = std::stoi(value());
        s.workers_given = true;
      } else if (a == "--dir") {
        s.dir = value();
      } else if (a == "--codec") {
        s.codec = value();
      } else if (a == "--input") {
        s.input = value();
      } else if (a == "--report") {
        s.report = value();
      } else if (a == "--keep") {
        s.keep = true;
      } else if (a == "--dry-run") {
        s.dry_run = true;
      } else if (a == "--ranks") {
        s.ranks = std::stoi(value());
      } else {
        usage("unknown argument '" + a + "'");
      }
    } catch (const std::exception& e) {
      usage(a + ": " + e.what());
    }
  }
  if (s.size < (int64_t{1} << 20)) usage("--size must be at least 1MiB");
  if (s.max_mem < (int64_t{64} << 20)) usage("--max-mem must be at least 64MiB");
  if (s.workers < 1) usage("--workers must be at least 1");
  if (s.ranks < 1) usage("--ranks must be at least 1");
  if (s.ranks > 1 && !s.dry_run) usage("--ranks is for --dry-run; run across ranks with mpirun -n N (scripts/demo --ranks N)");
  return s;
}

// A plane wave sin(2 pi (ky i / rows + kx j / cols)) of amplitude `amplitude`.
struct Wave {
  int64_t ky, kx;
  float amplitude;
};

// The image: `rows` x `cols` float32, noise uniform in [-1, 1) plus the waves.
// sin(a + b) = sin a cos b + cos a sin b, so each wave costs two multiply-adds
// per element with per-column tables shared by every block.
struct Image {
  int64_t rows, cols;
  std::vector<Wave> waves;
  std::vector<std::vector<float>> col_sin, col_cos;  // per wave, per column

  Image(int64_t r, int64_t c, std::vector<Wave> w) : rows(r), cols(c), waves(std::move(w)) {
    for (const Wave& wave : waves) {
      std::vector<float> s(static_cast<size_t>(cols)), co(static_cast<size_t>(cols));
      for (int64_t j = 0; j < cols; ++j) {
        const double b = 2 * std::numbers::pi * static_cast<double>((wave.kx * j) % cols) / static_cast<double>(cols);
        s[j] = static_cast<float>(std::sin(b));
        co[j] = static_cast<float>(std::cos(b));
      }
      col_sin.push_back(std::move(s));
      col_cos.push_back(std::move(co));
    }
  }

  // Rows [row0, row0 + shape[0]) of the image.
  ta::NDArray block(int64_t row0, const ta::Shape& shape) const {
    ta::NDArray out = ta::NDArray::empty(ta::DType::float32(), shape);
    float* p = out.data<float>();
    uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(row0 + 1);
    for (int64_t i = 0; i < shape[0]; ++i) {
      float* row = p + i * cols;
      for (int64_t j = 0; j < cols; ++j) {
        state ^= state << 13;  // xorshift64: fast, and plenty for noise
        state ^= state >> 7;
        state ^= state << 17;
        row[j] = static_cast<float>(state >> 40) * (2.0f / 16777216.0f) - 1.0f;
      }
      for (size_t w = 0; w < waves.size(); ++w) {
        const double a = 2 * std::numbers::pi * static_cast<double>((waves[w].ky * (row0 + i)) % rows) /
                         static_cast<double>(rows);
        const float sa = waves[w].amplitude * static_cast<float>(std::sin(a));
        const float ca = waves[w].amplitude * static_cast<float>(std::cos(a));
        const float* cs = col_cos[w].data();
        const float* sn = col_sin[w].data();
        for (int64_t j = 0; j < cols; ++j) row[j] += sa * cs[j] + ca * sn[j];
      }
    }
    return out;
  }

  // The radial frequency (cycles per sample) of a wave.
  double frequency(const Wave& w) const {
    const double fy = static_cast<double>(w.ky) / static_cast<double>(rows);
    const double fx = static_cast<double>(w.kx) / static_cast<double>(cols);
    return std::sqrt(fy * fy + fx * fx);
  }
};

// Radial bins of the power spectrum: bin b holds frequencies within half a bin
// of b / scale cycles per sample.
struct Radial {
  std::vector<double> power, count;
};

struct Binning {
  int64_t rows, cols;  // of the image (the spectrum has cols / 2 + 1 columns)
  double scale;        // bins per cycle per sample
  size_t bins;
};

// The power of one column block of the 2-D spectrum (rows x its columns, from
// `col0`) added into radial bins. Columns strictly between 0 and cols / 2 stand for
// their mirror images too (a real image's spectrum is Hermitian), so they count twice.
Radial radial_partial(const ta::NDArray& block, int64_t col0, const Binning& b) {
  Radial r{std::vector<double>(b.bins, 0.0), std::vector<double>(b.bins, 0.0)};
  const int64_t width = block.shape()[1];
  const auto* x = block.data<const std::complex<float>>();
  std::vector<double> fx2(static_cast<size_t>(width)), weight(static_cast<size_t>(width));
  for (int64_t j = 0; j < width; ++j) {
    const double fx = static_cast<double>(col0 + j) / static_cast<double>(b.cols);
    fx2[j] = fx * fx;
    weight[j] = (col0 + j == 0 || 2 * (col0 + j) == b.cols) ? 1.0 : 2.0;
  }
  for (int64_t i = 0; i < b.rows; ++i) {
    const int64_t ky = 2 * i <= b.rows ? i : i - b.rows;
    const double fy = static_cast<double>(ky) / static_cast<double>(b.rows);
    const std::complex<float>* row = x + i * width;
    for (int64_t j = 0; j < width; ++j) {
      // Rounds a non-negative value; std::lround is a libm call per element.
      const auto bin = static_cast<size_t>(std::sqrt(fy * fy + fx2[j]) * b.scale + 0.5);
      r.power[bin] += weight[j] * std::norm(row[j]);
      r.count[bin] += weight[j];
    }
  }
  return r;
}

Radial add(const std::vector<Radial>& parts) {
  Radial total = parts.front();
  for (size_t p = 1; p < parts.size(); ++p) {
    for (size_t k = 0; k < total.power.size(); ++k) {
      total.power[k] += parts[p].power[k];
      total.count[k] += parts[p].count[k];
    }
  }
  return total;
}

size_t nbytes(const Radial& r) { return (r.power.size() + r.count.size()) * sizeof(double); }

}  // namespace

// Partial sums travel between ranks (and spill) in their Spillable form (tessera/graph/spill.hpp).
template <>
struct tessera::Spillable<Radial> {
  static void serialize(const Radial& r, SpillWriter& w) {
    Spillable<std::vector<double>>::serialize(r.power, w);
    Spillable<std::vector<double>>::serialize(r.count, w);
  }
  static Radial deserialize(SpillReader& r) {
    Radial out;
    out.power = Spillable<std::vector<double>>::deserialize(r);
    out.count = Spillable<std::vector<double>>::deserialize(r);
    return out;
  }
};

namespace {

// Bins whose average power stands above 50 times the median and above both neighbours.
std::vector<size_t> peaks(const Radial& r) {
  std::vector<double> avg(r.power.size(), 0.0);
  for (size_t k = 0; k < avg.size(); ++k) avg[k] = r.count[k] > 0 ? r.power[k] / r.count[k] : 0.0;
  std::vector<double> sorted;
  for (size_t k = 2; k < avg.size(); ++k) {
    if (r.count[k] > 0) sorted.push_back(avg[k]);
  }
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::vector<size_t> found;
  for (size_t k = 2; k + 1 < avg.size(); ++k) {  // bins 0 and 1: the mean, not a wave
    if (avg[k] > 50 * median && avg[k] >= avg[k - 1] && avg[k] >= avg[k + 1]) found.push_back(k);
  }
  return found;
}

uint64_t tree_bytes(const fs::path& dir) {
  uint64_t total = 0;
  for (const auto& e : fs::recursive_directory_iterator(dir)) {
    if (e.is_regular_file()) total += e.file_size();
  }
  return total;
}

double peak_rss_mib() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;  // ru_maxrss is in KiB on Linux
}

class Stopwatch {
 public:
  double lap() {
    const auto now = std::chrono::steady_clock::now();
    const double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

// The ranks of the job (null when the demo runs alone) and whether this one prints.
struct Ranks {
  std::shared_ptr<tessera::Communicator> comm;
  bool lead() const { return !comm || comm->rank() == 0; }
  int size() const { return comm ? comm->size() : 1; }
};

tessera::GetOptions run_options(const Settings& s, const Ranks& ranks, tessera::diagnostics::ProgressBar& bar,
                                tessera::diagnostics::Report* report) {
  tessera::GetOptions o;
  o.num_workers = s.workers;
  o.communicator = ranks.comm;
  if (ranks.lead()) o.callbacks.push_back(bar.callbacks());
  if (report != nullptr) o.callbacks.push_back(report->callbacks());
  return o;
}

// The image's shape and the blocks of each step, from --size (or --input) and --max-mem.
struct Geometry {
  int64_t rows = 0, cols = 0;
  int64_t block_bytes = 0;       // a block of either step, at most
  int64_t row_block = 0;         // rows per block of the image and of the row spectrum
  int64_t spectrum_cols = 0;     // cols / 2 + 1
  int64_t col_block = 0;         // columns per block of the column spectrum
};

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

// The image's shape for --size: columns a power of two near sqrt(size / 4), rows to make up the size.
std::pair<int64_t, int64_t> image_shape(int64_t size) {
  int64_t cols = 1;
  while (cols * cols * 4 < size) cols *= 2;
  return {std::max<int64_t>(size / (4 * cols), 16), cols};
}

// Blocks [0, n) of one name go to ranks in contiguous runs (tessera/across/placement.hpp).
int owner(int64_t block, int64_t n, int ranks) { return static_cast<int>(block * ranks / n); }

// Radial bins of an image.
Binning binning_of(int64_t rows, int64_t cols) {
  const double scale = static_cast<double>(std::max(rows, cols));
  return {rows, cols, scale, static_cast<size_t>(scale * std::sqrt(0.5)) + 3};
}

// The radial sums' tree: level 0 has `leaves` partials, each next level adds up groups of 8.
std::vector<int64_t> tree_levels(int64_t leaves) {
  std::vector<int64_t> levels{leaves};
  while (levels.back() > 1) levels.push_back((levels.back() + 7) / 8);
  return levels;
}

// --dry-run: the plan across `s.ranks` ranks, from the same sizing and the
// rechunk's own exchange plan (print_exchange_plan), without computing.
int dry_run(const Settings& s) {
  constexpr double kMiB = 1.0 / (1 << 20);
  const auto [rows, cols] = image_shape(s.size);
  const Geometry g = geometry(s, rows, cols);
  const int P = s.ranks;
  const int64_t row_blocks = (rows + g.row_block - 1) / g.row_block;
  const int64_t col_blocks = (g.spectrum_cols + g.col_block - 1) / g.col_block;
  std::printf("demo --dry-run: image %lld x %lld float32 (%.0f MiB) on %d ranks x %d workers, max-mem %.0f MiB per rank\n",
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
  ta::print_exchange_plan(stdout, from, to, ta::DType::complex64(),
                          options, ta::plan_exchange(from.sizes(), to.sizes(), 8, options));
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
              static_cast<double>(radial_bytes) * kMiB, static_cast<double>(*std::max_element(sent.begin(), sent.end())) * kMiB,
              static_cast<double>(*std::max_element(received.begin(), received.end())) * kMiB, s.workers,
              static_cast<double>(2 * s.workers * rows * g.col_block * 8) * kMiB);
  return 0;
}

int run(const Settings& s, const Ranks& ranks, const fs::path& work, tessera::diagnostics::Report* report) {
  constexpr double kMiB = 1.0 / (1 << 20);
  auto [rows, cols] = image_shape(s.size);
  if (!s.input.empty()) {
    const ta::zarr::Store in = ta::zarr::open(s.input);
    if (in.dtype() != ta::DType::float32() || in.shape().size() != 2) {
      throw tessera::Error("--input: expected a 2-D float32 zarr array (an image.zarr of `demo --keep`), found " +
                           in.dtype().name() + " of shape " + ta::shape_str(in.shape()));
    }
    rows = in.shape()[0];
    cols = in.shape()[1];
  }
  const Geometry geo = geometry(s, rows, cols);
  const int64_t block_bytes = geo.block_bytes, row_block = geo.row_block, col_block = geo.col_block;
  const Image image(rows, cols,
                    {{0, cols / 16, 0.5f},
                     {std::lround(0.075 * static_cast<double>(rows)), std::lround(0.13 * static_cast<double>(cols)), 0.4f},
                     {std::lround(0.21 * static_cast<double>(rows)), std::lround(0.21 * static_cast<double>(cols)), 0.3f}});
  if (ranks.lead()) {
    std::printf("image %lld x %lld float32 (%.0f MiB), blocks of %lld rows; spectrum blocks of %lld columns; "
                "%d workers, max-mem %.0f MiB%s\n",
                static_cast<long long>(rows), static_cast<long long>(cols), static_cast<double>(rows * cols * 4) * kMiB,
                static_cast<long long>(row_block), static_cast<long long>(col_block), s.workers,
                static_cast<double>(s.max_mem) * kMiB,
                ranks.comm ? (", on each of " + std::to_string(ranks.size()) + " ranks").c_str() : "");
    std::fflush(stdout);
  }
  Stopwatch clock;

  // 1. Generate the image into a zarr store chunked by rows (across ranks:
  //    each rank its own blocks, the store published once by rank 0).
  const std::string input = s.input.empty() ? (work / "image.zarr").string() : s.input;
  if (s.input.empty()) {
    tessera::diagnostics::ProgressBar bar;
    auto make = [&image](std::span<const int64_t> offset, const ta::Shape& shape) {
      return image.block(offset[0], shape);
    };
    const ta::Array x = ta::from_blocks(make, ta::DType::float32(), {rows, cols}, {row_block, -1});
    ta::StoreOptions o;
    o.compute = run_options(s, ranks, bar, report);
    o.zarr.codec = s.codec;
    try {
      ta::store(x, input, o);
    } catch (const std::invalid_argument& e) {  // the spec, refused before any block is made
      throw std::invalid_argument("--codec: " + std::string(e.what()));
    }
  }
  const double t_generate = clock.lap();
  const uint64_t image_bytes = ranks.lead() ? tree_bytes(input) : 0;

  // 2. FFT along the rows; each row block's shards go straight into the
  //    column-chunked scratch store (across ranks: through the exchange's
  //    rounds to the rank writing each column chunk).
  const std::string scratch = (work / "spectrum-columns.zarr").string();
  bool direct = false;
  {
    tessera::diagnostics::ProgressBar bar;
    const ta::Array spectrum_rows = ta::rfft(ta::from_zarr(input), {.axis = 1});
    ta::RechunkStoreOptions o;
    o.rechunk.block_size_limit = block_bytes;
    o.rechunk.scratch_dir = work.string();
    o.store.compute = run_options(s, ranks, bar, report);
    // Across ranks the exchange's rounds are planned under --max-mem.
    if (ranks.comm) o.store.compute.memory_limit = static_cast<size_t>(s.max_mem);
    // Each row block's shard of a column block is one run of its chunk file but
    // in the last, narrower block (a run per row there): straight writes pay.
    o.direct_min_run = 0;
    direct = ta::rechunk_store(spectrum_rows, {-1, col_block}, scratch, o).direct;
  }
  const double t_rows = clock.lap();
  const uint64_t scratch_bytes = ranks.lead() ? tree_bytes(scratch) : 0;

  // 3. FFT along the columns, power spectrum, radial sums (a tree of partial sums).
  const Binning binning = binning_of(rows, cols);
  const double scale = binning.scale;
  Radial radial;
  {
    tessera::diagnostics::ProgressBar bar;
    const ta::Array spectrum = ta::fft(ta::from_zarr(scratch), {.axis = 0});
    tessera::Graph g = spectrum.graph();
    std::vector<tessera::Key> level;
    const auto& offsets = spectrum.chunks().offsets(1);
    for (int64_t j = 0; j < spectrum.numblocks()[1]; ++j) {
      tessera::Key k("radial-0", {j});
      g.task(k, tessera::fn("radial", [col0 = offsets[j], binning](const ta::NDArray& b) {
               return radial_partial(b, col0, binning);
             }),
             tessera::ref(spectrum.block_key({0, j})));
      level.push_back(k);
    }
    for (int depth = 1; level.size() > 1; ++depth) {
      std::vector<tessera::Key> next;
      for (size_t i = 0; i < level.size(); i += 8) {
        tessera::ArgList parts;
        for (size_t k = i; k < std::min(level.size(), i + 8); ++k) parts.items.emplace_back(tessera::ref(level[k]));
        tessera::Key k("radial-" + std::to_string(depth), {static_cast<int64_t>(next.size())});
        g.task(k, tessera::fn("add", add), parts);
        next.push_back(k);
      }
      level = std::move(next);
    }
    const tessera::Result sums = tessera::get(g, level.front(), run_options(s, ranks, bar, report));
    if (ranks.lead()) radial = sums.as<Radial>();  // across ranks the sums are on rank 0
  }
  const double t_columns = clock.lap();
  // Every rank's peak RSS (KiB), for rank 0 to print.
  const auto own_rss = static_cast<int64_t>(peak_rss_mib() * 1024);
  const std::vector<int64_t> rss = ranks.comm ? ranks.comm->allgather(own_rss) : std::vector<int64_t>{own_rss};
  if (!ranks.lead()) return 0;

  // 4. The peaks against the planted waves.
  const std::vector<size_t> found = peaks(radial);
  std::vector<double> planted;
  for (const Wave& w : image.waves) planted.push_back(image.frequency(w));
  std::sort(planted.begin(), planted.end());
  bool match = found.size() == planted.size();
  std::printf("planted frequencies (cycles/sample):  ");
  for (double f : planted) std::printf(" %.5f", f);
  std::printf("\ndetected frequencies (cycles/sample): ");
  for (size_t k = 0; k < found.size(); ++k) {
    const double f = static_cast<double>(found[k]) / scale;
    std::printf(" %.5f", f);
    if (k < planted.size() && std::lround(planted[k] * scale) != static_cast<long>(found[k])) match = false;
  }
  std::printf("  -> %s\n", match ? "match" : "MISMATCH");
  std::printf("time: generate %.1f s, FFT rows + shuffle to columns %.1f s, FFT columns + radial spectrum %.1f s; "
              "total %.1f s\n",
              t_generate, t_rows, t_columns, t_generate + t_rows + t_columns);
  std::printf("image store %.0f MiB on disk (%s)\n", static_cast<double>(image_bytes) * kMiB,
              s.input.empty() ? ("codec " + s.codec).c_str() : "--input");
  std::string rss_text;
  if (rss.size() == 1) {
    rss_text = "peak RSS " + std::to_string(std::lround(static_cast<double>(rss[0]) / 1024)) + " MiB";
  } else {
    int64_t total = 0;
    rss_text = "peak RSS per rank";
    for (size_t r = 0; r < rss.size(); ++r) {
      rss_text += (r == 0 ? " " : ", ") + std::to_string(std::lround(static_cast<double>(rss[r]) / 1024));
      total += rss[r];
    }
    rss_text += " MiB (sum " + std::to_string(std::lround(static_cast<double>(total) / 1024)) + " MiB)";
  }
  std::printf("%s (max-mem %.0f MiB); %.0f MiB through the scratch store on disk (%s)\n", rss_text.c_str(),
              static_cast<double>(s.max_mem) * kMiB, static_cast<double>(scratch_bytes) * kMiB,
              direct ? "shards written straight into its chunk files"
                     : (rss.size() > 1 ? "rechunked across the ranks" : "rechunked, then stored"));
  return match ? 0 : 1;
}

}  // namespace

// Whether a launcher (Open MPI's mpirun, or a PMI/PMIx one) started this process.
bool under_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMI_SIZE") != nullptr ||
         std::getenv("PMIX_RANK") != nullptr;
}

int main(int argc, char** argv) {
  Ranks ranks;
#if TESSERA_DEMO_MPI
  std::optional<tessera::mpi::Environment> mpi;  // only under mpirun: alone, the demo starts no MPI
  try {
    if (under_mpirun()) {
      mpi.emplace(argc, argv);
      if (tessera::mpi::world_size() > 1) ranks.comm = tessera::mpi::world_communicator();
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "demo: %s\n", e.what());
    return 1;
  }
#endif
  Settings s = parse(argc, argv);
  if (s.dry_run) return dry_run(s);
  if (ranks.comm && !s.workers_given) {
    // The ranks on this machine share its cores.
    const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
    const int here = local != nullptr ? std::max(1, std::atoi(local)) : 1;
    s.workers = std::max(1, s.workers / here);
  }
  // The work folder: rank 0 makes it, the others learn its name (--dir is shared).
  std::string tmpl = (fs::path(s.dir) / "tessera-demo-XXXXXX").string();
  if (ranks.lead() && ::mkdtemp(tmpl.data()) == nullptr) {
    std::perror(("demo: cannot make a folder under " + s.dir).c_str());
    tmpl.clear();
  }
  if (ranks.comm) tmpl = tessera::allgather_strings(*ranks.comm, tmpl)[0];
  if (tmpl.empty()) return 1;
  const fs::path work = tmpl;
  int status = 1;
  // One report of the demo's three runs (generate, FFT rows + shuffle, FFT columns), rank 0's.
  std::unique_ptr<tessera::diagnostics::Report> report;
  if (!s.report.empty() && ranks.lead()) {
    report = std::make_unique<tessera::diagnostics::Report>(tessera::diagnostics::ReportOptions{.title = "tessera demo"});
    report->set_command_line(std::vector<std::string>(argv, argv + argc));
  }
  try {
    status = run(s, ranks, work, report.get());
  } catch (const std::exception& e) {
    if (ranks.lead()) std::fprintf(stderr, "demo: %s\n", e.what());
    if (report) report->record_error(e);
  }
  if (report) {
    try {
      report->write_html(s.report);
      std::printf("report %s (open in a browser)\n", s.report.c_str());
    } catch (const std::exception& e) {
      std::fprintf(stderr, "demo: %s\n", e.what());
      status = 1;
    }
  }
  if (ranks.comm) tessera::barrier(*ranks.comm);  // every rank is done with the stores
  if (!ranks.lead()) return status;
  if (s.keep) {
    std::printf("kept the stores in %s\n", work.c_str());
  } else {
    std::error_code ec;
    fs::remove_all(work, ec);  // the folder mkdtemp made: only the demo's own stores
  }
  return status;
}
