// tools/rechunk_command.cpp — `tessera rechunk SRC DST --chunks ...`: an
// out-of-core rechunk from a .npy file or zarr store into a zarr store.
//
// The source is read lazily (each block's task maps its part of the file) and
// tessera::array::rechunk_store does the rest: with --method auto, when the
// shards land in DST's chunk files in long runs, each source block's task
// writes them straight there; otherwise it rechunks (tasks or shuffle) and
// stores. DST (a zarr store, or a .npy file when it ends in .npy) is written
// under a temporary name and published by an atomic rename at the end, so it
// is absent, the complete old output or the complete new one; --overwrite
// replaces only a store of the kind written, never SRC or a folder holding it.
// SIGINT/SIGTERM cancel the run: temporaries are removed, and the exit status
// is 130/143. Temporaries a killed run left are removed first, and reported.
// Memory: each worker holds about one input
// block and one output block at a time, so blocks are planned under
// --max-mem / (2 x workers + 2); the shuffle's scratch (next to DST unless
// --scratch) is a mapped file whose pages are handed back to the page cache as
// soon as they are written, and so are the source's pages once a block is
// read. The run's memory budget is --max-mem: the tasks method's intermediate
// blocks spill to the same scratch folder rather than pass it. The task graph
// is memory too (about a kilobyte a task): a store of small chunks is read in
// blocks of many chunks, and a rechunk whose graph would still pass an eighth
// of --max-mem (16 MiB at least: rechunk_graph_budget) is refused before it is built
// (rechunk_source.hpp).
#include <algorithm>
#include <new>
#include <cstdio>
#include <filesystem>
#include <optional>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "allocators.hpp"
#include "chunk_spec.hpp"
#include "cli.hpp"
#include "command.hpp"
#include "interrupt.hpp"
#include "ranks.hpp"
#include "rechunk_source.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/rechunk/exchange.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/report.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::tool {

namespace {

namespace ta = tessera::array;

// An HDF5 target (DST FILE.h5:/x) takes --codec none, gzip[:LEVEL] or zstd[:LEVEL], shuffled when
// compressed, as h5py users write their files.
ta::hdf5::Format hdf5_format(const ta::zarr::Format& zarr) {
  return {.codec = zarr.codec, .shuffle = zarr.codec != "none"};
}
namespace fs = std::filesystem;

//! The options of `tessera rechunk`, as CLI11 parsed them (define_rechunk() below says what each means).
struct Options {
  std::string src, dst, chunks, max_mem = "1GiB", method = "auto", codec = "none";
  std::optional<long> workers;
  std::optional<std::string> scratch, shard, report;
  std::vector<std::string> command_line;  // as the report shows it
  int zarr_format = 2;
  bool overwrite = false, no_progress = false, mpi = false;
  // --dry-run's
  bool dry_run = false;
  long ranks = 1;
  std::optional<std::string> shape, dtype, src_chunks;
};

ta::RechunkMethod parse_method(const std::string& text) {
  if (text == "tasks") return ta::RechunkMethod::tasks;
  if (text == "shuffle") return ta::RechunkMethod::shuffle;
  return ta::RechunkMethod::automatic;  // CLI11 let only auto, tasks and shuffle through
}

// A list of positive integers given to `option`: --shard's inner chunks
// (--chunks), --dry-run's --shape.
ta::Shape positive_list(const std::string& text, const std::string& option, const std::string& what) {
  ta::Shape out;
  std::stringstream ss(text);
  for (std::string item; std::getline(ss, item, ',');) {
    size_t used = 0;
    long long n = 0;
    try {
      n = std::stoll(item, &used);
    } catch (const std::exception&) {
      used = 0;
    }
    if (used == 0 || used != item.size() || n <= 0) {
      throw UsageError(option + ": " + what + ", found '" + item + "'");
    }
    out.push_back(n);
  }
  return out;
}

// `--dry-run`: the plan across --ranks ranks of the array SRC holds, or of the one --shape, --dtype and
// --src-chunks describe; nothing is read but SRC's metadata, and nothing is written.
int dry_run(const Options& o) {
  const long ranks = o.ranks;
  const long workers = o.workers.value_or(1);
  const std::optional<std::string>& shape_text = o.shape;
  const std::optional<std::string>& dtype_text = o.dtype;
  const std::optional<std::string>& src_chunks = o.src_chunks;
  if (!o.dst.empty()) throw UsageError("--dry-run writes nothing: give SRC or --shape, and no DST");
  if (shape_text && !o.src.empty()) throw UsageError("give SRC or --shape, not both");
  if (!shape_text && o.src.empty()) throw UsageError("missing SRC (or --shape)");
  const std::optional<std::string> src = shape_text ? std::nullopt : std::optional(o.src);
  const int64_t max_mem = ta::parse_bytes(o.max_mem);
  const ta::RechunkLimits limits = command_limits(max_mem, workers);
  const int64_t block_limit = limits.block_limit;
  ta::Chunks from;
  ta::Chunks stored;  // what `keep` keeps
  ta::DType dtype;
  if (src) {
    if (dtype_text || src_chunks) throw UsageError("--dtype and --src-chunks describe an array with --shape, not SRC");
    const ta::RechunkSource x = open_source(*src, limits);
    from = x.array.chunks();
    stored = x.stored;
    dtype = x.array.dtype();
  } else {
    if (!src_chunks) throw UsageError("--dry-run with --shape needs --src-chunks");
    const ta::Shape shape = positive_list(*shape_text, "--shape", "expected positive axis lengths");
    try {
      dtype = ta::DType::parse(dtype_text.value_or("float64"));
    } catch (const TypeError& e) {
      throw UsageError(std::string("--dtype: ") + e.what());
    }
    const std::vector<ta::RechunkAxis> src_axes = parse_chunks(*src_chunks);
    check_chunks_fit(src_axes, shape.size());
    std::vector<std::vector<int64_t>> whole;
    for (int64_t e : shape) whole.push_back({e});
    try {
      from = ta::RechunkSpec(src_axes).resolve(ta::Chunks(whole), dtype, block_limit);
    } catch (const ChunkError& e) {
      throw UsageError(std::string("--src-chunks: ") + e.what());
    }
    stored = from;
  }
  const std::vector<ta::RechunkAxis> axes = parse_chunks(o.chunks);
  check_chunks_fit(axes, from.ndim());
  ta::Chunks target;
  try {
    target = ta::RechunkSpec(axes).resolve(stored, dtype, block_limit);
  } catch (const ChunkError& e) {
    throw UsageError(std::string("--chunks: ") + e.what());
  }
  check_graph(from, target, limits);
  // The plan rechunk_store makes for --max-mem.
  const ta::ExchangeOptions options =
      ta::exchange_options(static_cast<size_t>(max_mem), static_cast<int>(ranks), static_cast<int>(workers));
  ta::ExchangePlan plan;
  try {
    plan = ta::plan_exchange(from.sizes(), target.sizes(), static_cast<int64_t>(dtype.itemsize()), options);
  } catch (const ChunkError& e) {
    throw UsageError(std::string("--max-mem: ") + e.what());
  }
  ta::print_exchange_plan(stdout, from, target, dtype, options, plan);
  return 0;
}

// The rechunk as one rank of an mpirun job: every rank checks and opens what
// the single-process run does, agrees with the others, then rechunk_store runs
// across the ranks. Only rank 0 reports; errors are reported by every rank.
int run_across(const std::shared_ptr<Communicator>& comm, const std::string& src, const std::string& dst,
               const std::vector<ta::RechunkAxis>& axes, const ta::zarr::Format& format, int64_t max_mem,
               long workers, bool overwrite) {
  bound_allocators(max_mem);
  ta::StoreOptions store{.overwrite = overwrite,
                         .protect = {ta::hdf5::file_of(src)},
                         .zarr = format,
                         .hdf5 = hdf5_format(format)};
  std::optional<ta::Array> x;
  ta::Chunks target;
  const ta::RechunkLimits limits = command_limits(max_mem, workers);
  const int64_t block_limit = limits.block_limit;
  std::exception_ptr failure;
  try {
    if (comm->rank() == 0) {
      for (const std::string& line : ta::clean_temporaries(dst)) {
        std::fprintf(stderr, "tessera rechunk: %s\n", line.c_str());
      }
    }
    std::error_code ec;
    if (fs::exists(fs::symlink_status(dst, ec)) && !overwrite) {
      throw InputError(dst, "exists; pass --overwrite to replace it");
    }
    const ta::RechunkSource source = open_source(src, limits);
    x = source.array;
    check_chunks_fit(axes, x->ndim());
    try {
      target = ta::RechunkSpec(axes).resolve(source.stored, x->dtype(), block_limit);
    } catch (const ChunkError& e) {
      throw UsageError(std::string("--chunks: ") + e.what());
    }
    check_max_mem(target, format.inner_chunks, x->dtype(), limits);
    check_graph(x->chunks(), target, limits);
  } catch (...) {
    failure = std::current_exception();
  }
  agree(*comm, failure);
  Interrupts interrupts;
  store.compute = {.num_workers = static_cast<int>(workers), .cancel = interrupts.token()};
  store.compute.memory_limit = static_cast<size_t>(max_mem);
  ta::RechunkStoreOptions options;  // assigned, not designated: GCC 12 warns of the latter falsely
  options.store = store;
  options.communicator = comm;
  try {
    (void)ta::rechunk_store(*x, target, dst, options);
  } catch (const CodecSpecError& e) {  // a codec the target format cannot take, on every rank
    throw UsageError(std::string("--codec: ") + e.what());
  }
  if (comm->rank() == 0) {
    std::fprintf(stderr, "tessera rechunk: %s (blocks %s) -> %s (blocks %s, across %d ranks)\n", src.c_str(),
                 ta::shape_str(x->chunks().max_block_shape()).c_str(), dst.c_str(),
                 ta::shape_str(target.max_block_shape()).c_str(), comm->size());
  }
  return 0;
}

int run(const Options& o) {
  if (o.dry_run) return dry_run(o);
  const std::optional<std::string>& report_path = o.report;
  std::shared_ptr<Communicator> comm;
  if (o.mpi || launched_by_mpirun()) {
    if (report_path) throw UsageError("--report draws a run on one process; it cannot be used with --mpi");
    comm = start_mpi();
    agree_on_options(*comm, "--workers " + (o.workers ? std::to_string(*o.workers) : std::string("default")) +
                                " --max-mem " + o.max_mem);
  }
  const int ranks = comm ? comm->size() : 1;
  const long workers = o.workers.value_or(workers_per_rank(ranks));
  const std::optional<std::string>& scratch = o.scratch;
  const bool overwrite = o.overwrite;
  if (o.src.empty()) throw UsageError("missing SRC");
  if (o.dst.empty()) throw UsageError("missing DST");
  if (report_path) check_report_path(*report_path);
  const std::string& src = o.src;
  const std::string& dst = o.dst;
  if (o.shard && o.zarr_format != 3) throw UsageError("--shard needs --zarr-format 3");
  // With --shard, the target blocks are the shards; --chunks are their inner chunks.
  const std::string target_option = o.shard ? "--shard" : "--chunks";
  const std::vector<ta::RechunkAxis> axes = parse_chunks(o.shard ? *o.shard : o.chunks, target_option);
  ta::zarr::Format format{.zarr_format = o.zarr_format, .codec = o.codec, .inner_chunks = {}};
  if (o.shard)
    format.inner_chunks = positive_list(o.chunks, "--chunks", "with --shard, expected positive inner chunk sizes");
  const ta::RechunkMethod method = parse_method(o.method);
  const int64_t max_mem = ta::parse_bytes(o.max_mem);
  if (comm) return run_across(comm, src, dst, axes, format, max_mem, workers, overwrite);
  bound_allocators(max_mem);
  for (const std::string& line : ta::clean_temporaries(dst))
    std::fprintf(stderr, "tessera rechunk: %s\n", line.c_str());
  std::error_code ec;
  if (fs::exists(fs::symlink_status(dst, ec)) && !overwrite) {
    throw InputError(dst, "exists; pass --overwrite to replace it");
  }
  ta::StoreOptions store{.overwrite = overwrite,
                         .protect = {ta::hdf5::file_of(src)},
                         .zarr = format,
                         .hdf5 = hdf5_format(format)};
  try {
    ta::check_target(dst, store);
  } catch (const StorageError& e) {
    throw InputError(dst, e.what());
  }

  const ta::RechunkLimits limits = command_limits(max_mem, workers);
  const int64_t block_limit = limits.block_limit;
  const ta::RechunkSource source = open_source(src, limits);
  const ta::Array& x = source.array;
  check_chunks_fit(axes, x.ndim(), target_option);
  const ta::RechunkSpec spec(axes);
  ta::Chunks target;
  try {
    target = spec.resolve(source.stored, x.dtype(), block_limit);
  } catch (const ChunkError& e) {
    throw UsageError(target_option + ": " + e.what());
  }
  check_max_mem(target, format.inner_chunks, x.dtype(), limits);
  check_graph(x.chunks(), target, limits);
  const fs::path dst_dir = fs::absolute(ta::hdf5::file_of(dst)).parent_path();
  const ta::RechunkOptions options{.method = method,
                                   .block_size_limit = block_limit,
                                   .scratch_dir = scratch.value_or(dst_dir.string())};
  diagnostics::ProgressBar bar;
  Interrupts interrupts;
  store.compute = {.num_workers = static_cast<int>(workers), .cancel = interrupts.token()};
  // The scheduler's budget makes --max-mem a bound for every method: when the
  // results held (the tasks method's intermediate blocks) would pass it, they
  // spill to the scratch folder and come back just before they are read.
  store.compute.memory_limit = static_cast<size_t>(max_mem);
  store.compute.scratch_dir = options.scratch_dir;
  // "auto" lets rechunk_store write straight into the chunk files; a named
  // method always goes through rechunk with it.
  ta::RechunkStoreOptions store_options{
      .method = method == ta::RechunkMethod::automatic ? ta::RechunkStoreMethod::direct_when_runs_are_long
                                                       : ta::RechunkStoreMethod::through_rechunk,
      .rechunk = options, .store = store};
  if (!o.no_progress) store_options.store.compute.callbacks.push_back(bar.callbacks());
  diagnostics::Report report({.title = "tessera rechunk " + src + " -> " + dst});
  report.set_command_line(o.command_line);
  if (report_path) store_options.store.compute.callbacks.push_back(report.callbacks());
  ta::RechunkStoreResult done;
  try {
    try {
      done = ta::rechunk_store(x, target, dst, store_options);
    } catch (const std::exception& e) {
      if (report_path) {
        report.record_error(e);
        write_report(report, *report_path, "tessera rechunk");
      }
      throw;
    }
  } catch (const CodecSpecError& e) {  // a codec the target format cannot take, found before writing
    throw UsageError(std::string("--codec: ") + e.what());
  } catch (const Cancelled&) {
    if (interrupts.signal() == 0) throw;
    std::fprintf(stderr, "\ntessera rechunk: interrupted by %s; %s left as it was, temporaries removed\n",
                 interrupts.signal_name(), dst.c_str());
    return interrupts.exit_status();
  }
  std::fprintf(stderr, "tessera rechunk: %s (blocks %s) -> %s (blocks %s, %s)\n", src.c_str(),
               ta::shape_str(x.chunks().max_block_shape()).c_str(), dst.c_str(),
               ta::shape_str(done.chunks.max_block_shape()).c_str(),
               done.direct ? "shards written straight into its chunk files" : "rechunked, then stored");
  if (report_path && write_report(report, *report_path, "tessera rechunk")) {
    std::fprintf(stderr, "tessera rechunk: report %s (open in a browser)\n", report_path->c_str());
  }
  if (interrupts.signal() != 0) {
    std::fprintf(stderr, "tessera rechunk: interrupted by %s after %s was written\n", interrupts.signal_name(),
                 dst.c_str());
    return interrupts.exit_status();
  }
  return 0;
}

void define_rechunk(CLI::App& rechunk, Action& action) {
  rechunk.footer(
      "Rechunks the .npy file, zarr store (zarr v2 or v3, any codec) or HDF5 dataset (FILE.h5:/group/x, also .nc) "
      "SRC into the zarr store DST (a .npy file when DST ends in .npy, an HDF5 dataset for FILE.h5:/x: --codec none, "
      "gzip[:LEVEL] or zstd[:LEVEL], shuffled when compressed; NetCDF-4 for FILE.nc:/x). With --dry-run, prints "
      "the plan of the rechunk across --ranks ranks (rounds, messages, "
      "bytes per message, per-rank memory) without MPI or data: from SRC's metadata, or from --shape, --dtype and "
      "--src-chunks.\nSIGINT or SIGTERM stops the run, removes its temporaries and exits 130 or 143.");
  auto o = std::make_shared<Options>();
  set_action(rechunk, action, [o, &rechunk] {
    o->command_line = command_line(rechunk);
    return run(*o);
  });
  rechunk.add_option("SRC", o->src, "a .npy file, a zarr v2 or v3 array or an HDF5 dataset FILE.h5:/group/x");
  rechunk.add_option("DST", o->dst,
                     "the zarr store to write (a .npy file when it ends in .npy, FILE.h5:/x an HDF5 dataset)");
  rechunk
      .add_option("--chunks", o->chunks, "one entry per axis: a block size, -1 (whole axis), auto, or keep (as in SRC)")
      ->required()
      ->check(chunks_check());
  CLI::Option* max_mem = rechunk.add_option(
      "--max-mem", o->max_mem,
      "memory to stay under (default 1GiB); blocks are planned to fit, and results held beyond it spill to the "
      "scratch folder; a store of small chunks is read many chunks a task, and a rechunk of more chunks than the "
      "task graph can hold in an eighth of it (16 MiB at least) is refused, as is a shard index past a worker's "
      "share");
  max_mem->check(size_check());
  rechunk.add_option("--memory-limit", o->max_mem, "the same as --max-mem (as in graph run)")
      ->check(size_check())
      ->excludes(max_mem);
  rechunk.add_option("--method", o->method, "auto (default: tasks for small graphs, else shuffle), tasks or shuffle")
      ->check(CLI::IsMember({"auto", "tasks", "shuffle"}));
  rechunk.add_option("--workers", o->workers, "threads (default: the hardware's; with --dry-run, 1)")
      ->check(CLI::Range(1, 4096));
  rechunk.add_flag("--overwrite", o->overwrite, "replace an existing DST of the kind written (otherwise refused)");
  rechunk.add_flag("--no-progress", o->no_progress, "draw no progress bar");
  CLI::Option* dry =
      rechunk.add_flag("--dry-run", o->dry_run, "print the plan across --ranks ranks; read and write no data");
  // Options of the run only.
  dry->excludes(rechunk.add_option("--scratch", o->scratch,
                                   "directory of the shuffle's scratch file and of spilled results (default: DST's)")
                    ->type_name("DIR"));
  dry->excludes(rechunk.add_option("--codec", o->codec,
                                   "DST's compressor: none (default), blosc[:CNAME[:LEVEL[:SHUFFLE]]] (e.g. "
                                   "blosc:zstd:5:bitshuffle), zstd[:LEVEL], gzip[:LEVEL], and for zarr v2 "
                                   "zlib[:LEVEL], lz4, bz2[:LEVEL], lzma[:PRESET]")
                    ->type_name("SPEC"));
  dry->excludes(rechunk.add_option("--zarr-format", o->zarr_format, "2 (default) or 3")->check(CLI::IsMember({2, 3})));
  dry->excludes(rechunk.add_option("--shard", o->shard,
                                   "zarr v3: shards of this shape, each cut into inner chunks of --chunks (whole "
                                   "numbers that divide the shard)")
                    ->check(chunks_check()));
  dry->excludes(rechunk.add_flag("--mpi", o->mpi,
                                 "rechunk across the ranks of an mpirun job (the default when started by mpirun with "
                                 "more than one rank); --max-mem is per rank, --workers defaults to cores / ranks"));
  dry->excludes(rechunk.add_option("--report", o->report,
                                   "write an HTML report of the run (task stream, memory, spills; also when it "
                                   "fails); not with --mpi")
                    ->type_name("REPORT.html"));
  // Options of --dry-run only.
  rechunk.add_option("--ranks", o->ranks, "--dry-run: the number of ranks (default 1)")
      ->check(CLI::Range(1L, long{1} << 24))
      ->needs(dry);
  rechunk.add_option("--shape", o->shape, "--dry-run: the array's shape, instead of SRC")
      ->type_name("S0,S1,...")
      ->needs(dry);
  rechunk.add_option("--dtype", o->dtype, "--dry-run with --shape: its dtype (default float64)")->needs(dry);
  rechunk.add_option("--src-chunks", o->src_chunks, "--dry-run with --shape: its chunks")
      ->check(chunks_check())
      ->needs(dry);
}

}  // namespace

const CommandGroup& rechunk_group() {
  static const CommandGroup group{"rechunk", "rechunk a .npy or zarr array into a zarr store, out of core",
                                  define_rechunk};
  return group;
}

}  // namespace tessera::tool
