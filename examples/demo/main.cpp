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
//
// The program is cut by idea: settings (the command line), image (the input
// and its planted waves), plan (block sizes from --max-mem, --dry-run),
// spectrum (radial sums and their peaks); this file runs the three steps.
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <vector>

#include "image.hpp"
#include "plan.hpp"
#include "settings.hpp"
#include "spectrum.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/report.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/scheduler/get.hpp"
#if TESSERA_DEMO_MPI
#include "tessera/mpi/communicator.hpp"
#include "tessera/mpi/environment.hpp"
#endif

namespace {

using namespace demo;
namespace ta = tessera::array;
namespace fs = std::filesystem;

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
