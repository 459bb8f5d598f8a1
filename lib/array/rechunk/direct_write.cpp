// rechunk_store: a rechunk written into a new zarr store, straight into its
// chunk files when that pays.
//
// The store's chunks are the new blocks, so nothing has to hold a new block in
// memory: the task of each old block cuts it into the shards the new blocks
// need and writes each shard at its place in the new block's chunk file, with
// pwrite. A shard is first staged contiguously (one copy, within the cache),
// then lands in its chunk file as runs: the whole shard when it spans the chunk
// on every axis after its first partial one, else one run per row of the
// leading axes. The page cache takes the writes as it takes `cp`'s: no mapping,
// no page faults, no scratch file, and each byte copied twice, as `cp` copies
// it twice (read, write). The staged path (rechunk, then store) writes every
// byte into a scratch or a new block and copies it again into a mapped chunk.
//
// Each run is a system call, so direct writes pay only when runs are long: at
// least `direct_min_run` bytes (64 KiB) on average over the whole rechunk (a
// rows-to-columns rechunk writes 256 x 256 float64 shards as single 512 KiB
// runs); otherwise the staged path runs. No two shards overlap, so tasks write
// concurrently without locks.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "array/ops/store.hpp"
#include "array/rechunk/across.hpp"
#include "array/rechunk/blocks.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"
#include "storage/unique_fd.hpp"

namespace tessera::array {

using storage::UniqueFd;
namespace {

// What every write task of one rechunk_store shares.
struct ChunkWriter {
  std::vector<AxisMap> maps;
  detail::Feeds feeds;
  DType dtype;
  Shape chunk_shape;               // the store's (padded) chunk shape
  Strides chunk_strides;           // C-order byte strides of a chunk file
  std::vector<int64_t> numblocks;  // of the new chunks
  std::shared_ptr<const zarr::Store> store;
};

// How a shard lies in its C-order chunk file: `count` runs of `bytes` each,
// one per index of the shard's first `axis` axes.
struct Runs {
  size_t axis = 0;
  int64_t count = 1;
  size_t bytes = 0;
};

Runs runs_of(std::span<const int64_t> shape, const Shape& chunk_shape, size_t itemsize) {
  size_t k = shape.size();
  size_t elements = 1;
  // Trailing axes the shard spans wholly join the run, and so does the first
  // axis it spans in part.
  while (k > 0 && shape[k - 1] == chunk_shape[k - 1]) elements *= static_cast<size_t>(shape[--k]);
  if (k > 0) elements *= static_cast<size_t>(shape[--k]);
  Runs r{k, 1, elements * itemsize};
  for (size_t a = 0; a < k; ++a) r.count *= shape[a];
  return r;
}

// Whether the average run over every shard of the rechunk has `min_run` bytes.
bool direct_writes_pay(const ChunkWriter& w, const Chunks& old_chunks, size_t min_run) {
  const std::vector<int64_t> begin(w.numblocks.size(), 0);
  size_t bytes = 0;
  int64_t runs = 0;
  for_each_block(old_chunks, [&](std::span<const int64_t> in) {
    detail::for_each_shard(w.maps, w.feeds, in, begin, w.numblocks, [&](const detail::Shard& s) {
      const Runs r = runs_of(s.shape, w.chunk_shape, w.dtype.itemsize());
      if (r.bytes == 0) return;
      bytes += r.bytes * static_cast<size_t>(r.count);
      runs += r.count;
    });
  });
  return runs > 0 && bytes / static_cast<size_t>(runs) >= min_run;
}

void write_all(int fd, const std::byte* data, size_t bytes, off_t offset, const std::string& path) {
  while (bytes > 0) {
    const ssize_t n = ::pwrite(fd, data, bytes, offset);
    if (n < 0) {
      if (errno == EINTR) continue;
      throw StorageError(path, absl::StrCat("cannot write ", bytes, " bytes at offset ", offset), errno);
    }
    data += n;
    bytes -= static_cast<size_t>(n);
    offset += n;
  }
}

UniqueFd open_chunk_file(const std::string& path, int flags) {
  UniqueFd file(::open(path.c_str(), flags | O_CLOEXEC, 0644));
  if (file.fd < 0) throw StorageError(path, "cannot open a chunk file to write", errno);
  return file;
}

// Writes every shard of old block `in` into its chunk file.
void write_shards(const ChunkWriter& w, const NDArray& block, std::span<const int64_t> in) {
  const std::vector<int64_t> begin(w.numblocks.size(), 0);
  const size_t itemsize = w.dtype.itemsize();
  Buffer stage;
  detail::for_each_shard(w.maps, w.feeds, in, begin, w.numblocks, [&](const detail::Shard& s) {
    const Shape shape(s.shape.begin(), s.shape.end());
    const Runs runs = runs_of(s.shape, w.chunk_shape, itemsize);
    const size_t bytes = runs.bytes * static_cast<size_t>(runs.count);
    if (bytes == 0) return;
    if (stage.size() < bytes) stage = Buffer::allocate(bytes);
    NDArray(stage, w.dtype, shape, NDArray::c_strides(shape, itemsize), 0)
        .assign(detail::box_view(block, s.source_start, s.shape));
    const std::string path = w.store->chunk_path({s.new_block.begin(), s.new_block.end()});
    const UniqueFd file = open_chunk_file(path, O_WRONLY);
    int64_t fixed = 0;  // the offset of the shard's start along the axes a run covers
    for (size_t a = runs.axis; a < shape.size(); ++a) fixed += s.target_start[a] * w.chunk_strides[a];
    const std::byte* data = stage.data();
    const std::vector<int64_t> leading(shape.begin(), shape.begin() + static_cast<ptrdiff_t>(runs.axis));
    for_each_index(leading, [&](std::span<const int64_t> i) {
      int64_t offset = fixed;
      for (size_t a = 0; a < runs.axis; ++a) offset += (s.target_start[a] + i[a]) * w.chunk_strides[a];
      write_all(file.fd, data, runs.bytes, static_cast<off_t>(offset), path);
      data += runs.bytes;
    });
  });
}

// Creates every chunk file of `store`, full size (zeros: the fill value).
// (The writer has at least one axis.)
void create_chunk_files(const ChunkWriter& w) {
  const auto size = static_cast<off_t>(w.chunk_strides[0] * w.chunk_shape[0]);
  for_each_index(w.numblocks, [&](std::span<const int64_t> j) {
    const std::string path = w.store->chunk_path({j.begin(), j.end()});
    const UniqueFd file = open_chunk_file(path, O_WRONLY | O_CREAT | O_TRUNC);
    if (::ftruncate(file.fd, size) != 0) throw StorageError(path, "cannot size a chunk file", errno);
  });
}

}  // namespace

RechunkStoreResult rechunk_store(const Array& x, const RechunkSpec& chunks, const std::string& path,
                                 const RechunkStoreOptions& options) {
  const Chunks target = chunks.resolve(x.chunks(), x.dtype(), options.rechunk.block_size_limit);
  if (options.communicator || options.store.compute.communicator) {
    RechunkStoreOptions across = options;
    if (!across.communicator) across.communicator = options.store.compute.communicator;
    return detail::rechunk_store_across(x, target, path, across);
  }
  const storage::PublishOptions publish = publish_options(path, options.store);
  // Direct writes land raw bytes in zarr chunk files: a .npy target is stored whole, an encoded or
  // sharded one block by block.
  const bool raw = publish.kind == storage::Kind::zarr && options.store.zarr.codec == "none" &&
                   options.store.zarr.zarr_format == 2 && options.store.zarr.inner_chunks.empty();
  if (options.method == RechunkStoreMethod::direct_when_runs_are_long && raw && x.size() > 0 && x.ndim() > 0) {
    auto w = std::make_shared<ChunkWriter>();
    w->maps = old_to_new(x.chunks().sizes(), target.sizes());
    w->feeds = detail::feeds_of(w->maps, x.chunks());
    w->dtype = x.dtype();
    w->chunk_shape = regular_chunk_shape(target);
    w->chunk_strides = NDArray::c_strides(w->chunk_shape, x.dtype().itemsize());
    w->numblocks = target.numblocks();
    if (direct_writes_pay(*w, x.chunks(), options.direct_min_run)) {
      storage::publish(path, publish, [&](const std::string& tmp) {
        w->store = std::make_shared<const zarr::Store>(
            zarr::create(tmp, x.dtype(), x.shape(), w->chunk_shape, Scalar(0), options.store.zarr));
        create_chunk_files(*w);
        const std::shared_ptr<const ChunkWriter> writer = w;
        write_blocks(
            x, "rechunk-write-" + unique_token(),
            [writer, old_chunks = x.chunks(), name = x.name()](const std::vector<int64_t>& index,
                                                               const NDArray& block) {
              check_block(block, old_chunks.block_shape(index), writer->dtype, Key(name, index), "rechunk_store");
              write_shards(*writer, block, index);
            },
            options.store.compute);
      });
      return {target, true};
    }
  }
  // The run refuses a task that needs more than its memory limit; a fused
  // task that would is made from pieces instead.
  RechunkOptions rechunk_options = options.rechunk;
  if (rechunk_options.fused_task_limit == 0) {
    rechunk_options.fused_task_limit = static_cast<int64_t>(options.store.compute.memory_limit);
  }
  const Array y = rechunk(x, target, rechunk_options);
  store(y, path, options.store);
  return {y.chunks(), false};
}

}  // namespace tessera::array
