// The `shuffle` rechunk: shards written into a scratch buffer laid out by new block.
//
// The rechunk is split into n-D partials (rechunk/plan.hpp). For partial P:
//
//   (scratch, P)                   makes P's buffer: its new blocks one after
//        |                         the other, each C-ordered
//   (transfer, P, I) ...           one per old block I of P: cuts I into the
//        |                         shards the new blocks of P need and writes
//        |                         each at its place in the buffer
//   (barrier, P)                   waits for every transfer of P
//        |
//   (out, J) ...                   each new block J of P: a view of its region
//
// A partial whose only new block is its only old block, whole, is an alias.
// Across ranks the buffer is one process's: scratch and barrier are
// process-local tasks (placement.hpp), so a partial's tasks share a rank; its
// old blocks travel there and its new blocks leave as NDArrays.
// Memory: a transfer holds one old block; a new block costs nothing beyond its
// region of the buffer, and a buffer is released with the last view of it.
// With `disk`, the buffer is a file in the scratch directory, space reserved
// with posix_fallocate (a full disk is an error, not a SIGBUS), mapped, and
// unlinked at once, so it disappears with its mapping whatever happens.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include <absl/strings/str_cat.h>

#include "array/rechunk/blocks.hpp"
#include "tessera/across/placement.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/task.hpp"
#include "storage/pages.hpp"
#include "storage/unique_fd.hpp"

namespace tessera::array::detail {

using storage::UniqueFd;
using tessera::kProcessLocal;

namespace {

//! What every task of one shuffle shares.
struct ShuffleContext {
  Chunks old_chunks;
  Chunks new_chunks;
  DType dtype;
  std::vector<AxisMap> maps;
  Feeds feeds;
  std::vector<std::vector<AxisPartial>> partials;
  bool disk = true;
  std::string scratch_dir;

  AxisPartial partial(size_t axis, int64_t p) const { return partials[axis][static_cast<size_t>(p)]; }
};
using Context = std::shared_ptr<const ShuffleContext>;

//! One partial's buffer: a region per new block, in C order of the partial's
//! grid. On disk, each region is its own mapping (up to kMaxMappings per
//! partial), so a new block's pages leave the process with its last view.
struct ScratchRegion {
  std::vector<Buffer> blocks;
  bool on_disk = false;
  size_t bytes = 0;
};

//! A task's handle on a region. Heap scratch counts in the scheduler's memory
//! accounting; a mapped file does not hold memory of its own.
struct Scratch {
  std::shared_ptr<ScratchRegion> region;
  size_t nbytes() const { return region->on_disk ? sizeof(Scratch) : region->bytes; }
};

constexpr size_t kMaxMappings = 1024;

size_t round_up(size_t n, size_t to) { return (n + to - 1) / to * to; }

// Maps `sizes.size()` regions of a new scratch file in `dir`, each at a
// page-aligned offset; the file is unlinked before anything is written.
std::vector<Buffer> map_scratch_file(const std::string& dir, const std::vector<size_t>& sizes) {
  const size_t page = tessera::detail::page_size();
  const bool per_block = sizes.size() <= kMaxMappings;
  std::vector<size_t> offsets;
  size_t total = 0;
  for (size_t n : sizes) {
    offsets.push_back(total);
    total += per_block ? round_up(std::max<size_t>(n, 1), page) : n;
  }
  const std::string pattern = dir + "/tessera-rechunk-XXXXXX";
  std::string path = pattern;
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw StorageError(pattern, "cannot create a rechunk scratch file", errno);
  ::unlink(path.c_str());  // gone from the directory now; the space lives as long as a mapping
  const UniqueFd closer{fd};  // the mappings do not need it
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(total)); err != 0) {
    throw StorageError(path, absl::StrCat("cannot reserve ", total, " bytes of rechunk scratch"), err);
  }
  auto map = [&](size_t offset, size_t bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, static_cast<off_t>(offset));
    if (p == MAP_FAILED) throw StorageError(path, "cannot map the rechunk scratch file", errno);
    return std::shared_ptr<std::byte>(static_cast<std::byte*>(p), [bytes](std::byte* q) { ::munmap(q, bytes); });
  };
  std::vector<Buffer> blocks;
  if (per_block) {
    for (size_t i = 0; i < sizes.size(); ++i)
      blocks.emplace_back(map(offsets[i], std::max<size_t>(sizes[i], 1)), sizes[i], true);
    return blocks;
  }
  std::shared_ptr<std::byte> whole = map(0, std::max<size_t>(total, 1));
  for (size_t i = 0; i < sizes.size(); ++i) {
    blocks.emplace_back(std::shared_ptr<std::byte>(whole, whole.get() + offsets[i]), sizes[i], true);
  }
  return blocks;
}

// One allocation per region, so each new block's memory goes with its last
// view, and freed blocks' memory is reused (Buffer::allocate).
std::vector<Buffer> allocate_scratch(const std::vector<size_t>& sizes) {
  std::vector<Buffer> blocks;
  blocks.reserve(sizes.size());
  for (size_t n : sizes) blocks.push_back(Buffer::allocate(n));
  return blocks;
}

// Drops the pages of `bytes` at `data` (a region of a shared file mapping) from
// this process: the data stays in the file and the page cache. Keeps the
// process's resident memory at the blocks in use, not the scratch written.
void release_pages(const std::byte* data, size_t bytes) {
  const auto page = static_cast<uintptr_t>(tessera::detail::page_size());
  const auto begin = reinterpret_cast<uintptr_t>(data) / page * page;
  const auto end = round_up(reinterpret_cast<uintptr_t>(data) + bytes, page);
  ::madvise(reinterpret_cast<void*>(begin), end - begin, MADV_DONTNEED);
}

std::string default_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// The new blocks of partial `p` (one index per axis), as global block indices.
std::vector<int64_t> partial_extent(const ShuffleContext& c, std::span<const int64_t> p) {
  std::vector<int64_t> extent(p.size());
  for (size_t a = 0; a < p.size(); ++a) {
    const AxisPartial ap = c.partial(a, p[a]);
    extent[a] = ap.new_end - ap.new_begin;
  }
  return extent;
}

// The position of new block `out` in the C-order grid of partial `p`.
size_t local_index(const ShuffleContext& c, std::span<const int64_t> p, std::span<const int64_t> out) {
  size_t flat = 0;
  for (size_t a = 0; a < p.size(); ++a) {
    const AxisPartial ap = c.partial(a, p[a]);
    flat = flat * static_cast<size_t>(ap.new_end - ap.new_begin) + static_cast<size_t>(out[a] - ap.new_begin);
  }
  return flat;
}

Scratch make_scratch(const ShuffleContext& c, std::span<const int64_t> p) {
  std::vector<int64_t> origin(p.size());
  for (size_t a = 0; a < p.size(); ++a) origin[a] = c.partial(a, p[a]).new_begin;
  std::vector<size_t> sizes;
  for_each_index(partial_extent(c, p), [&](std::span<const int64_t> local) {
    std::vector<int64_t> out(local.begin(), local.end());
    for (size_t a = 0; a < out.size(); ++a) out[a] += origin[a];
    sizes.push_back(array_nbytes(c.dtype, c.new_chunks.block_shape(out)));
  });
  auto region = std::make_shared<ScratchRegion>();
  region->on_disk = c.disk;
  for (size_t n : sizes) region->bytes += n;
  region->blocks = c.disk ? map_scratch_file(c.scratch_dir, sizes) : allocate_scratch(sizes);
  return Scratch{std::move(region)};
}

// New block `out` of partial `p`, over its region of the buffer. With
// `hand_over` (the new block's own task, after the barrier), the region's
// mapping passes to the block: the partial's handle lets go of it, so it is
// unmapped, and its pages leave the process, as soon as the block is released
// rather than when the whole partial is. Each block's task touches only its
// own element, so no two threads write one.
NDArray region_view(const ShuffleContext& c, const Scratch& s, std::span<const int64_t> p,
                    std::span<const int64_t> out, bool hand_over = false) {
  Shape shape = c.new_chunks.block_shape({out.begin(), out.end()});
  Strides strides = NDArray::c_strides(shape, c.dtype.itemsize());
  Buffer& region = s.region->blocks[local_index(c, p, out)];
  return NDArray(hand_over ? std::exchange(region, Buffer()) : region, c.dtype, std::move(shape), std::move(strides),
                 0);
}

// Writes every shard of old block `in` that partial `p` needs. Returns the
// bytes written.
int64_t transfer(const ShuffleContext& c, const Scratch& s, const NDArray& block, std::span<const int64_t> p,
                 std::span<const int64_t> in) {
  const size_t ndim = p.size();
  std::vector<int64_t> begin(ndim), end(ndim);
  for (size_t a = 0; a < ndim; ++a) {
    const AxisPartial ap = c.partial(a, p[a]);
    begin[a] = ap.new_begin;
    end[a] = ap.new_end;
  }
  int64_t written = 0;
  for_each_shard(c.maps, c.feeds, in, begin, end, [&](const Shard& shard) {
    const NDArray target = box_view(region_view(c, s, p, shard.new_block), shard.target_start, shard.shape);
    target.assign(box_view(block, shard.source_start, shard.shape));
    if (s.region->on_disk) {
      const auto [first, end] = target.byte_span();
      release_pages(target.buffer().data() + first, static_cast<size_t>(end - first));
    }
    written += static_cast<int64_t>(target.nbytes());
  });
  return written;
}

}  // namespace

Step shuffle_layer(const StepInput& x, const Chunks& chunks, const RechunkOptions& options, const std::string& tok) {
  auto ctx = std::make_shared<ShuffleContext>();
  ctx->old_chunks = x.chunks;
  ctx->new_chunks = chunks;
  ctx->dtype = x.dtype;
  ctx->maps = old_to_new(x.chunks.sizes(), chunks.sizes());
  ctx->feeds = feeds_of(ctx->maps, x.chunks);
  ctx->partials = partials(ctx->maps);
  ctx->disk = options.disk;
  ctx->scratch_dir = options.scratch_dir.empty() ? default_scratch_dir() : options.scratch_dir;
  const Context c = ctx;

  const std::string out_name = "rechunk-shuffle-" + tok;
  const std::string scratch_name = "rechunk-scratch-" + tok;
  const std::string transfer_name = "rechunk-transfer-" + tok;
  const std::string barrier_name = "rechunk-barrier-" + tok;
  const size_t ndim = chunks.ndim();
  std::vector<int64_t> partial_counts;
  for (const auto& axis : c->partials) partial_counts.push_back(static_cast<int64_t>(axis.size()));

  Graph layer;
  for_each_index(partial_counts, [&](std::span<const int64_t> pv) {
    const std::vector<int64_t> p(pv.begin(), pv.end());
    std::vector<int64_t> old_extent(ndim), old_origin(ndim), new_origin(ndim);
    bool identity = true;
    for (size_t a = 0; a < ndim; ++a) {
      const AxisPartial ap = c->partial(a, p[a]);
      old_extent[a] = ap.old_end - ap.old_begin;
      old_origin[a] = ap.old_begin;
      new_origin[a] = ap.new_begin;
      identity = identity && old_extent[a] == 1 && ap.new_end - ap.new_begin == 1 &&
                 c->old_chunks[a][static_cast<size_t>(ap.old_begin)] ==
                     c->new_chunks[a][static_cast<size_t>(ap.new_begin)];
    }
    if (identity) {
      layer.alias(Key(out_name, new_origin), x.block_key(old_origin));
      return;
    }
    const Key scratch(scratch_name, p);
    layer.put(scratch,
              Task(fn(std::string(kProcessLocal) + "rechunk_scratch", [c, p] { return make_scratch(*c, p); })));
    std::vector<Arg> transfers;
    for_each_index(old_extent, [&](std::span<const int64_t> local) {
      std::vector<int64_t> in(local.begin(), local.end());
      for (size_t a = 0; a < ndim; ++a) in[a] += old_origin[a];
      std::vector<int64_t> key_index = p;
      key_index.insert(key_index.end(), in.begin(), in.end());
      const Key t(transfer_name, key_index);
      layer.put(t, Task(fn("rechunk_transfer",
                           [c, p, in](const Scratch& s, const NDArray& block) {
                             return transfer(*c, s, block, p, in);
                           }),
                        ref(scratch), ref(x.block_key(in))));
      transfers.emplace_back(ref(t));
    });
    const Key barrier(barrier_name, p);
    layer.put(barrier, Task(fn(std::string(kProcessLocal) + "rechunk_barrier",
                               [](const Scratch& s, const ValueList&) { return s; }),
                            ref(scratch), ArgList{std::move(transfers)}));
    for_each_index(partial_extent(*c, p), [&](std::span<const int64_t> local) {
      std::vector<int64_t> out(local.begin(), local.end());
      for (size_t a = 0; a < ndim; ++a) out[a] += new_origin[a];
      layer.put(Key(out_name, out), Task(fn("rechunk_region", [c, p, out](const Scratch& s) {
                                              return region_view(*c, s, p, out, /*hand_over=*/true);
                                            }),
                                            ref(barrier)));
    });
  });
  return {out_name, std::move(layer)};
}

}  // namespace tessera::array::detail
