// rechunk_path: the `tessera rechunk` command's work, by path, for the command and for Python.
#include "tessera/array/rechunk/rechunk_path.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {

namespace fs = std::filesystem;

namespace {

// a * b, saturating at INT64_MAX (both non-negative).
int64_t times(int64_t a, int64_t b) { return b > 0 && a > INT64_MAX / b ? INT64_MAX : a * b; }

// The number of blocks of `c`, as a message says it.
std::string count_str(const Chunks& c) {
  double n = 1;
  for (size_t a = 0; a < c.ndim(); ++a) n *= static_cast<double>(c.numblocks(a));
  return n >= 0x1p63 ? "more than 2^63" : std::to_string(static_cast<int64_t>(n));
}

// Blocks of whole rows (slices along the slowest axis) under the block limit:
// each one contiguous run of the file.
Array open_npy(const std::string& path, int64_t block_limit) {
  const npy::Header h = npy::read_header(path);
  std::vector<AxisChunks> axes(h.shape.size(), AxisChunks(-1));
  if (!h.shape.empty()) {
    int64_t row = static_cast<int64_t>(h.dtype.itemsize());
    const size_t slow = h.fortran_order ? h.shape.size() - 1 : 0;
    for (size_t k = 0; k < h.shape.size() && row <= block_limit; ++k) {
      // Saturates: a row beyond the limit gets blocks of one row whatever its size.
      const int64_t e = k == slow ? 1 : std::max<int64_t>(h.shape[k], 1);
      row = e > block_limit / row ? block_limit + 1 : row * e;
    }
    axes[slow] = AxisChunks(std::max<int64_t>(block_limit / row, 1));
  }
  return from_npy(path, ChunkSpec(std::move(axes)));
}

// The shape of the blocks a store is read in: its chunks grouped, from the last
// axis, into blocks of about `want` bytes (never past the block limit): 1 MiB,
// which a task reads in far more time than it costs to schedule, less for a
// small array so that every worker gets blocks, more when the graph budget
// needs fewer tasks. `extra` is what reading a chunk holds beside its elements.
Shape read_block_shape(const zarr::Store& store, int64_t extra, const RechunkLimits& limits) {
  const Shape& shape = store.shape();
  const Shape& chunk = store.chunk_shape();
  int64_t chunk_bytes = static_cast<int64_t>(store.dtype().itemsize()), nbytes = chunk_bytes;
  for (size_t a = 0; a < shape.size(); ++a) {
    chunk_bytes = times(chunk_bytes, chunk[a]);
    nbytes = times(nbytes, shape[a]);
  }
  chunk_bytes = std::max<int64_t>(chunk_bytes + extra, 1);
  const int64_t busy = nbytes / (4 * static_cast<int64_t>(std::max(limits.workers, 1)));
  const int64_t tasks = std::max<int64_t>(limits.graph_budget / 2 / kGraphBytesPerTask, 1);
  int64_t want = std::max(std::min<int64_t>(int64_t{1} << 20, busy), nbytes / tasks + 1);
  want = std::min(want, limits.block_limit);
  int64_t factor = std::max<int64_t>(want / chunk_bytes, 1);
  Shape block = chunk;
  for (size_t a = shape.size(); a-- > 0 && factor > 1;) {
    const int64_t n = std::max<int64_t>((shape[a] + chunk[a] - 1) / chunk[a], 1);
    const int64_t f = std::min(n, factor);
    block[a] = std::min(times(chunk[a], f), std::max<int64_t>(shape[a], 1));
    factor = f == n ? factor / n : 1;
  }
  return block;
}

// A rechunk reads every chunk a store declares, a missing one as its fill value
// after a file lookup: a store declaring more than this many cannot be read in a
// sane time, however small its bytes (2^31 declared one-byte chunks read at about
// 1.5 us each: most of an hour), so it is refused before any task is made.
constexpr double kMaxStoredChunks = 0x1p25;

RechunkSource open_zarr(const std::string& path, const RechunkLimits& limits) {
  const zarr::Store store = zarr::open(path);
  const zarr::Metadata& m = store.metadata();
  const std::string& max_mem = limits.names.max_mem;
  // A shard is decoded with its index in memory (twice while it is read: as stored and decoded).
  int64_t index = 0;
  if (!m.inner_chunk_shape.empty()) {
    index = 16;
    for (size_t a = 0; a < m.chunk_shape.size(); ++a) index = times(index, m.chunk_shape[a] / m.inner_chunk_shape[a]);
    if (times(index, 2) > limits.block_limit) {
      throw BudgetError(max_mem + ": " + std::to_string(limits.max_mem) + " bytes cannot read " + path +
                        ": each shard holds " + std::to_string(index / 16) + " inner chunks of " +
                        shape_str(m.inner_chunk_shape) + ", whose index takes " + std::to_string(times(index, 2)) +
                        " bytes while the shard is read (16 per inner chunk, twice), more than the " +
                        std::to_string(limits.block_limit) + " bytes a worker may hold; give a larger " + max_mem);
    }
  }
  const Shape block = read_block_shape(store, times(index, 2), limits);
  std::vector<std::vector<int64_t>> sizes;
  for (size_t a = 0; a < block.size(); ++a) sizes.push_back(normalize_chunks(block[a], {store.shape()[a]})[0]);
  const Chunks read(std::move(sizes));
  const int64_t graph = times(read.total_blocks(), kGraphBytesPerTask);
  if (graph > limits.graph_budget) {
    throw BudgetError(max_mem + ": " + std::to_string(limits.max_mem) + " bytes cannot hold the task graph of " +
                      path + ": its " + count_str(store.chunks()) + " chunks of " + shape_str(m.chunk_shape) +
                      ", read in " + std::to_string(read.total_blocks()) + " blocks of up to " + shape_str(block) +
                      ", make a graph of about " + std::to_string(graph) + " bytes, more than the " +
                      std::to_string(limits.graph_budget) + " bytes " + max_mem + " leaves for it; give a larger " +
                      max_mem);
  }
  double declared = 1;
  for (size_t a = 0; a < store.chunks().ndim(); ++a) declared *= static_cast<double>(store.chunks().numblocks(a));
  if (declared > kMaxStoredChunks) {
    throw ChunkError(path + ": its " + count_str(store.chunks()) + " chunks of " + shape_str(m.chunk_shape) +
                     " are more than the 33554432 (2^25) a rechunk reads in a sane time (each is a file to look up, "
                     "also when it is missing); rewrite it with larger chunks first");
  }
  std::vector<AxisChunks> axes;
  for (int64_t b : block) axes.emplace_back(b);
  return {from_zarr(path, ChunkSpec(std::move(axes))), store.chunks()};
}

}  // namespace

RechunkLimits rechunk_limits(int64_t max_mem, int workers, RechunkOptionNames names) {
  workers = std::max(workers, 1);
  return {.max_mem = max_mem,
          .workers = workers,
          .block_limit = std::max<int64_t>(max_mem / (2 * static_cast<int64_t>(workers) + 2), 1),
          .graph_budget = rechunk_graph_budget(max_mem),
          .names = std::move(names)};
}

RechunkSource open_rechunk_source(const std::string& path, const RechunkLimits& limits) {
  try {
    if (const auto dataset = hdf5::split_target(path)) {  // FILE.h5:/group/x: one block per chunk
      Array x = from_hdf5(dataset->first, dataset->second);
      Chunks stored = x.chunks();
      return {std::move(x), std::move(stored)};
    }
    if (path.size() > 4 && path.ends_with(".npy")) {
      Array x = open_npy(path, limits.block_limit);
      Chunks stored = x.chunks();
      return {std::move(x), std::move(stored)};
    }
    return open_zarr(path, limits);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw StorageError(path, "cannot open: it needs more memory than this machine gives (std::bad_alloc)");
  } catch (const std::exception& e) {
    // The standard library's messages (basic_filebuf::underflow, vector max_size) name no file.
    throw StorageError(path, std::string("cannot open: ") + e.what());
  }
}

void check_rechunk_memory(const Chunks& target, const Shape& inner, DType dtype, const RechunkLimits& limits) {
  const RechunkOptionNames& n = limits.names;
  int64_t block = static_cast<int64_t>(dtype.itemsize());
  // A shard's index (16 bytes per inner chunk) is held three times while the
  // shard is encoded: filled, encoded, written.
  int64_t index = inner.empty() ? 0 : 48;
  const Shape shape = target.max_block_shape();
  for (size_t a = 0; a < shape.size(); ++a) {
    block = times(block, shape[a]);
    if (!inner.empty()) index = times(index, (shape[a] + inner[a] - 1) / inner[a]);
  }
  if (index > 0 && block <= limits.block_limit && index > limits.block_limit - block) {
    throw BudgetError(n.max_mem + ": " + std::to_string(limits.max_mem) + " bytes cannot hold a shard of " +
                      shape_str(shape) + " with its index of " + std::to_string(index / 48) + " inner chunks of " +
                      n.chunks + " " + shape_str(inner) + " (" + std::to_string(index) +
                      " bytes while written, 48 per inner chunk) within the " + std::to_string(limits.block_limit) +
                      " bytes a worker may hold; choose larger " + n.chunks + ", a smaller " + n.shard +
                      " or a larger " + n.max_mem);
  }
  if (block <= limits.block_limit) return;
  const int64_t per_block = 2 * static_cast<int64_t>(limits.workers) + 2;
  throw BudgetError(n.max_mem + ": " + std::to_string(limits.max_mem) + " bytes cannot hold the blocks of " +
                    n.chunks + " " + shape_str(shape) + " (" + std::to_string(block) + " bytes each, " +
                    std::to_string(per_block) + " of them with " + std::to_string(limits.workers) +
                    " workers); the smallest " + n.max_mem + " that works is " +
                    std::to_string(times(block, per_block)) + " bytes, or choose smaller " + n.chunks +
                    " or fewer " + n.workers);
}

void check_rechunk_graph(const Chunks& from, const Chunks& to, const RechunkLimits& limits) {
  const int64_t graph = rechunk_graph_nbytes(from.sizes(), to.sizes());
  if (graph <= limits.graph_budget) return;
  const RechunkOptionNames& n = limits.names;
  throw BudgetError(n.max_mem + ": " + std::to_string(limits.max_mem) +
                    " bytes cannot hold the task graph of a rechunk from " + count_str(from) + " blocks of " +
                    shape_str(from.max_block_shape()) + " to " + count_str(to) + " chunks of " +
                    shape_str(to.max_block_shape()) + ": about " + std::to_string(graph) + " bytes, more than the " +
                    std::to_string(limits.graph_budget) + " bytes " + n.max_mem +
                    " leaves for it; choose larger " + n.chunks + " or give a larger " + n.max_mem);
}

RechunkStoreResult rechunk_path(const std::string& source, const std::string& target, const RechunkSpec& chunks,
                                const RechunkPathOptions& options) {
  if (options.max_mem <= 0) {
    throw ChunkError("max_mem: expected a positive size, found " + std::to_string(options.max_mem));
  }
  const int workers = options.num_workers > 0 ? options.num_workers
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  StoreOptions store{.overwrite = options.overwrite, .protect = {hdf5::file_of(source)}, .zarr = options.format};
  check_target(target, store);

  const RechunkLimits limits = rechunk_limits(options.max_mem, workers);
  const RechunkSource src = open_rechunk_source(source, limits);
  const Array& x = src.array;
  const Chunks new_chunks = chunks.resolve(src.stored, x.dtype(), limits.block_limit);
  check_rechunk_memory(new_chunks, options.format.inner_chunks, x.dtype(), limits);
  check_rechunk_graph(x.chunks(), new_chunks, limits);

  RechunkOptions rechunk{.method = options.method,
                         .block_size_limit = limits.block_limit,
                         .scratch_dir = options.scratch_dir.empty()
                                            ? fs::absolute(hdf5::file_of(target)).parent_path().string()
                                            : options.scratch_dir};
  store.compute = options.compute;
  store.compute.num_workers = workers;
  // The scheduler's budget makes max_mem a bound for every method: results held
  // beyond it (the tasks method's intermediate blocks) spill to the scratch folder.
  store.compute.memory_limit = static_cast<size_t>(options.max_mem);
  store.compute.scratch_dir = rechunk.scratch_dir;
  // "auto" lets rechunk_store write straight into the chunk files; a named
  // method always goes through rechunk with it.
  RechunkStoreOptions store_options;
  store_options.method = options.method == RechunkMethod::automatic ? RechunkStoreMethod::direct_when_runs_are_long
                                                                    : RechunkStoreMethod::through_rechunk;
  store_options.rechunk = rechunk;
  store_options.store = std::move(store);
  return rechunk_store(x, new_chunks, target, store_options);
}

}  // namespace tessera::array
