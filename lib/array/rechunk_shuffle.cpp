// The `shuffle` rechunk: shards written into a scratch buffer laid out by new block.
//
// The rechunk is split into n-D partials (rechunk_plan.hpp). For partial P:
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
// Memory: a transfer holds one old block; a new block costs nothing beyond its
// region of the buffer, and a buffer is released with the last view of it.
// With `disk`, the buffer is a file in the scratch directory, space reserved
// with posix_fallocate (a full disk is an error, not a SIGBUS), mapped, and
// unlinked at once, so it disappears with its mapping whatever happens.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <memory>
#include <string>
#include <utility>

#include <absl/strings/str_cat.h>

#include "rechunk_blocks.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array::detail {

namespace {

//! What every task of one shuffle shares.
struct ShuffleContext {
  Chunks old_chunks;
  Chunks new_chunks;
  DType dtype;
  std::vector<AxisMap> maps;
  std::vector<std::vector<std::vector<int64_t>>> feeds;  // per axis, per old block: new blocks
  std::vector<std::vector<AxisPartial>> partials;
  bool disk = true;
  std::string scratch_dir;

  AxisPartial partial(size_t axis, int64_t p) const { return partials[axis][static_cast<size_t>(p)]; }
};
using Context = std::shared_ptr<const ShuffleContext>;

//! One partial's buffer and where each of its new blocks lives in it.
struct ScratchRegion {
  Buffer buffer;
  std::vector<int64_t> offsets;  // per new block of the partial, C order of its local grid
  bool on_disk = false;
};

//! A task's handle on a region. Heap scratch counts in the scheduler's memory
//! accounting; a mapped file does not hold memory of its own.
struct Scratch {
  std::shared_ptr<const ScratchRegion> region;
  size_t nbytes() const { return region->on_disk ? sizeof(Scratch) : region->buffer.size(); }
};

Buffer map_scratch_file(const std::string& dir, size_t bytes) {
  std::string path = dir + "/tessera-rechunk-XXXXXX";
  const int fd = ::mkstemp(path.data());
  if (fd < 0) throw StorageError(path, "cannot create a rechunk scratch file", errno);
  ::unlink(path.c_str());  // gone from the directory now; the space lives as long as the mapping
  if (const int err = ::posix_fallocate(fd, 0, static_cast<off_t>(bytes)); err != 0) {
    ::close(fd);
    throw StorageError(path, absl::StrCat("cannot reserve ", bytes, " bytes of rechunk scratch"), err);
  }
  void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int map_errno = errno;
  ::close(fd);
  if (p == MAP_FAILED) throw StorageError(path, "cannot map the rechunk scratch file", map_errno);
  std::shared_ptr<std::byte> data(static_cast<std::byte*>(p), [bytes](std::byte* q) { ::munmap(q, bytes); });
  return Buffer(std::move(data), bytes, true);
}

std::string default_scratch_dir() {
  const char* tmp = std::getenv("TMPDIR");
  return tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
}

// The new blocks of partial `p` (one index per axis), as global block indices.
std::vector<int64_t> partial_extent(const ShuffleContext& c, absl::Span<const int64_t> p) {
  std::vector<int64_t> extent(p.size());
  for (size_t a = 0; a < p.size(); ++a) {
    const AxisPartial ap = c.partial(a, p[a]);
    extent[a] = ap.new_end - ap.new_begin;
  }
  return extent;
}

// The position of new block `out` in the C-order grid of partial `p`.
size_t local_index(const ShuffleContext& c, absl::Span<const int64_t> p, absl::Span<const int64_t> out) {
  size_t flat = 0;
  for (size_t a = 0; a < p.size(); ++a) {
    const AxisPartial ap = c.partial(a, p[a]);
    flat = flat * static_cast<size_t>(ap.new_end - ap.new_begin) + static_cast<size_t>(out[a] - ap.new_begin);
  }
  return flat;
}

Scratch make_scratch(const ShuffleContext& c, absl::Span<const int64_t> p) {
  auto region = std::make_shared<ScratchRegion>();
  const int64_t item = static_cast<int64_t>(c.dtype.itemsize());
  int64_t total = 0;
  std::vector<int64_t> origin(p.size());
  for (size_t a = 0; a < p.size(); ++a) origin[a] = c.partial(a, p[a]).new_begin;
  for_each_block(partial_extent(c, p), [&](absl::Span<const int64_t> local) {
    std::vector<int64_t> out(local.begin(), local.end());
    for (size_t a = 0; a < out.size(); ++a) out[a] += origin[a];
    region->offsets.push_back(total);
    int64_t n = item;
    for (int64_t e : c.new_chunks.block_shape(out)) n *= e;
    total += n;
  });
  region->on_disk = c.disk;
  region->buffer = c.disk ? map_scratch_file(c.scratch_dir, static_cast<size_t>(total))
                          : Buffer::allocate(static_cast<size_t>(total));
  return Scratch{std::move(region)};
}

// New block `out` of partial `p`, over its region of the buffer.
NDArray region_view(const ShuffleContext& c, const Scratch& s, absl::Span<const int64_t> p,
                    absl::Span<const int64_t> out) {
  Shape shape = c.new_chunks.block_shape({out.begin(), out.end()});
  Strides strides = NDArray::c_strides(shape, c.dtype.itemsize());
  return NDArray(s.region->buffer, c.dtype, std::move(shape), std::move(strides),
                 s.region->offsets[local_index(c, p, out)]);
}

// Writes every shard of old block `in` that partial `p` needs. Returns the
// bytes written.
int64_t transfer(const ShuffleContext& c, const Scratch& s, const NDArray& block, absl::Span<const int64_t> p,
                 absl::Span<const int64_t> in) {
  const size_t ndim = p.size();
  struct Shard {
    int64_t new_block;
    const Piece* piece;
  };
  std::vector<std::vector<Shard>> axis_shards(ndim);  // per axis: what `in` gives the partial's new blocks
  std::vector<int64_t> extent(ndim);
  for (size_t a = 0; a < ndim; ++a) {
    const AxisPartial ap = c.partial(a, p[a]);
    for (int64_t j : c.feeds[a][static_cast<size_t>(in[a])]) {
      if (j < ap.new_begin || j >= ap.new_end) continue;
      for (const Piece& piece : c.maps[a][static_cast<size_t>(j)]) {
        if (piece.block == in[a]) axis_shards[a].push_back({j, &piece});
      }
    }
    extent[a] = static_cast<int64_t>(axis_shards[a].size());
  }
  int64_t written = 0;
  std::vector<int64_t> out(ndim), src_start(ndim), dst_start(ndim), shape(ndim);
  for_each_block(extent, [&](absl::Span<const int64_t> k) {
    int64_t n = static_cast<int64_t>(c.dtype.itemsize());
    for (size_t a = 0; a < ndim; ++a) {
      const Shard& shard = axis_shards[a][static_cast<size_t>(k[a])];
      out[a] = shard.new_block;
      src_start[a] = shard.piece->start;
      dst_start[a] = shard.piece->output_start;
      shape[a] = shard.piece->size();
      n *= shape[a];
    }
    box_view(region_view(c, s, p, out), dst_start, shape).assign(box_view(block, src_start, shape));
    written += n;
  });
  return written;
}

}  // namespace

Array shuffle_step(const Array& x, const Chunks& chunks, const RechunkOptions& options) {
  auto ctx = std::make_shared<ShuffleContext>();
  ctx->old_chunks = x.chunks();
  ctx->new_chunks = chunks;
  ctx->dtype = x.dtype();
  ctx->maps = old_to_new(x.chunks().sizes(), chunks.sizes());
  for (size_t a = 0; a < ctx->maps.size(); ++a) {
    ctx->feeds.push_back(new_from_old_axis(ctx->maps[a], x.chunks()[a].size()));
  }
  ctx->partials = partials(ctx->maps);
  ctx->disk = options.disk;
  ctx->scratch_dir = options.scratch_dir.empty() ? default_scratch_dir() : options.scratch_dir;
  const Context c = ctx;

  const std::string tok = step_token(x, chunks, options.disk ? "shuffle-disk" : "shuffle-memory");
  const std::string out_name = "rechunk-shuffle-" + tok;
  const std::string scratch_name = "rechunk-scratch-" + tok;
  const std::string transfer_name = "rechunk-transfer-" + tok;
  const std::string barrier_name = "rechunk-barrier-" + tok;
  const size_t ndim = chunks.ndim();
  std::vector<int64_t> partial_counts;
  for (const auto& axis : c->partials) partial_counts.push_back(static_cast<int64_t>(axis.size()));

  Graph layer;
  for_each_block(partial_counts, [&](absl::Span<const int64_t> pv) {
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
    layer.put(scratch, Task(fn("rechunk_scratch", [c, p] { return make_scratch(*c, p); })));
    std::vector<Arg> transfers;
    for_each_block(old_extent, [&](absl::Span<const int64_t> local) {
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
    layer.put(barrier, Task(fn("rechunk_barrier", [](const Scratch& s, const ValueList&) { return s; }),
                            ref(scratch), ArgList{std::move(transfers)}));
    for_each_block(partial_extent(*c, p), [&](absl::Span<const int64_t> local) {
      std::vector<int64_t> out(local.begin(), local.end());
      for (size_t a = 0; a < ndim; ++a) out[a] += new_origin[a];
      layer.put(Key(out_name, out), Task(fn("rechunk_region", [c, p, out](const Scratch& s) {
                                              return region_view(*c, s, p, out);
                                            }),
                                            ref(barrier)));
    });
  });
  return Array(out_name, chunks, x.dtype(), std::move(layer), {x});
}

}  // namespace tessera::array::detail
