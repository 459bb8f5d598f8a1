// tools/rechunk_source.cpp — the blocks `tessera rechunk` reads, and the graph check.
#include "rechunk_source.hpp"

#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "command.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/array/rechunk/rechunk_path.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::tool {

namespace {

namespace ta = tessera::array;

// a * b, saturating at INT64_MAX (both non-negative).
int64_t times(int64_t a, int64_t b) { return b != 0 && a > INT64_MAX / b ? INT64_MAX : a * b; }

std::string count_str(const ta::Chunks& c) {
  double n = 1;
  for (size_t a = 0; a < c.ndim(); ++a) n *= static_cast<double>(c.numblocks(a));
  return n >= 0x1p63 ? "more than 2^63" : std::to_string(static_cast<int64_t>(n));
}

// Blocks of whole rows under the block limit, as rechunk_path reads a .npy file.
ta::Array open_npy(const std::string& src, int64_t block_limit) { return ta::open_rechunk_source(src, block_limit); }

// The shape of the blocks a store is read in: its chunks grouped, from the last
// axis, into blocks of about `want` bytes (never past the block limit): 1 MiB,
// which a task reads in far more time than it costs to schedule, less for a
// small array so that every worker gets blocks, more when the graph budget
// needs fewer tasks.
ta::Shape read_block_shape(const ta::zarr::Store& store, int64_t extra, const SourceLimits& limits) {
  const ta::Shape& shape = store.shape();
  const ta::Shape& chunk = store.chunk_shape();
  int64_t chunk_bytes = static_cast<int64_t>(store.dtype().itemsize()), nbytes = chunk_bytes;
  for (size_t a = 0; a < shape.size(); ++a) {
    chunk_bytes = times(chunk_bytes, chunk[a]);
    nbytes = times(nbytes, shape[a]);
  }
  chunk_bytes = std::max<int64_t>(chunk_bytes + extra, 1);
  const int64_t busy = nbytes / (4 * limits.workers);
  const int64_t tasks = std::max<int64_t>(limits.graph_budget / 2 / ta::kGraphBytesPerTask, 1);
  int64_t want = std::max(std::min<int64_t>(int64_t{1} << 20, busy), nbytes / tasks + 1);
  want = std::min(want, limits.block_limit);
  int64_t factor = std::max<int64_t>(want / chunk_bytes, 1);
  ta::Shape block = chunk;
  for (size_t a = shape.size(); a-- > 0 && factor > 1;) {
    const int64_t n = std::max<int64_t>((shape[a] + chunk[a] - 1) / chunk[a], 1);
    const int64_t f = std::min(n, factor);
    block[a] = std::min(times(chunk[a], f), std::max<int64_t>(shape[a], 1));
    factor = f == n ? factor / n : 1;
  }
  return block;
}

ta::Array open_zarr(const std::string& src, const SourceLimits& limits) {
  const ta::zarr::Store store = ta::zarr::open(src);
  const ta::zarr::Metadata& m = store.metadata();
  // A shard is decoded with its index in memory (twice while it is read: as stored and decoded).
  int64_t index = 0;
  if (!m.inner_chunk_shape.empty()) {
    index = 16;
    for (size_t a = 0; a < m.chunk_shape.size(); ++a) index = times(index, m.chunk_shape[a] / m.inner_chunk_shape[a]);
    if (times(index, 2) > limits.block_limit) {
      throw UsageError("--max-mem: " + std::to_string(limits.max_mem) + " bytes cannot read " + src +
                       ": each shard holds " + std::to_string(index / 16) + " inner chunks of " +
                       ta::shape_str(m.inner_chunk_shape) + ", whose index takes " + std::to_string(times(index, 2)) +
                       " bytes while the shard is read (16 per inner chunk, twice), more than the " +
                       std::to_string(limits.block_limit) + " bytes a worker may hold; give a larger --max-mem");
    }
  }
  const ta::Shape block = read_block_shape(store, times(index, 2), limits);
  std::vector<std::vector<int64_t>> sizes;
  for (size_t a = 0; a < block.size(); ++a) {
    sizes.push_back(ta::normalize_chunks(block[a], {store.shape()[a]})[0]);
  }
  const ta::Chunks read(std::move(sizes));
  const int64_t graph = times(read.total_blocks(), ta::kGraphBytesPerTask);
  if (graph > limits.graph_budget) {
    throw UsageError("--max-mem: " + std::to_string(limits.max_mem) + " bytes cannot hold the task graph of " + src +
                     ": its " + count_str(store.chunks()) + " chunks of " + ta::shape_str(m.chunk_shape) +
                     ", read in " + std::to_string(read.total_blocks()) + " blocks of up to " +
                     ta::shape_str(block) + ", make a graph of about " + std::to_string(graph) +
                     " bytes, more than the " + std::to_string(limits.graph_budget) +
                     " bytes --max-mem leaves for it; give a larger --max-mem");
  }
  std::vector<ta::AxisChunks> axes;
  for (int64_t b : block) axes.emplace_back(b);
  return ta::from_zarr(src, ta::ChunkSpec(std::move(axes)));
}

}  // namespace

Source open_source(const std::string& src, const SourceLimits& limits) {
  try {
    if (src.size() > 4 && src.substr(src.size() - 4) == ".npy") {
      ta::Array x = open_npy(src, limits.block_limit);
      ta::Chunks stored = x.chunks();
      return {std::move(x), std::move(stored)};
    }
    ta::Array x = open_zarr(src, limits);
    return {x, ta::zarr::open(src).chunks()};
  } catch (const Error& e) {
    // Every error tessera throws (a StorageError, a bad codec or .npy header)
    // names the source and what is wrong with it.
    throw InputError(src, e.what());
  } catch (const std::bad_alloc&) {
    throw InputError(src, "cannot open: it needs more memory than this machine gives (std::bad_alloc)");
  } catch (const UsageError&) {
    throw;
  } catch (const std::exception& e) {
    // The standard library's messages (basic_filebuf::underflow, vector max_size) name no file.
    throw InputError(src, std::string("cannot open: ") + e.what());
  }
}

void check_graph(const ta::Chunks& from, const ta::Chunks& to, const SourceLimits& limits) {
  const int64_t graph = ta::rechunk_graph_nbytes(from.sizes(), to.sizes());
  if (graph <= limits.graph_budget) return;
  throw UsageError("--max-mem: " + std::to_string(limits.max_mem) + " bytes cannot hold the task graph of a rechunk from " +
                   count_str(from) + " blocks of " + ta::shape_str(from.max_block_shape()) + " to " + count_str(to) +
                   " chunks of " + ta::shape_str(to.max_block_shape()) + ": about " + std::to_string(graph) +
                   " bytes, more than the " + std::to_string(limits.graph_budget) +
                   " bytes --max-mem leaves for it; choose larger --chunks or give a larger --max-mem");
}

}  // namespace tessera::tool
