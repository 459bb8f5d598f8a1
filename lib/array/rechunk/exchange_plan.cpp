// plan_exchange: the rounds of the rechunk across ranks (exchange.hpp).
//
// A round's figures come from boxes, not shards: what a rank sends in a round
// is, per input block it owns, the block's overlap with each box of output
// blocks (a product of per-axis overlaps), and what it receives is the size of
// its output blocks in the round. So planning costs the input blocks each round
// touches plus the output blocks, never the shards (a 10 TiB rows-to-columns
// rechunk has billions of those), and a plan for 1024 ranks prints at once.
#include <algorithm>
#include <cstdint>
#include <vector>

#include <absl/strings/str_cat.h>

#include "array/rechunk/across.hpp"
#include "tessera/array/core/grid.hpp"
#include "tessera/array/rechunk/exchange.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {

int64_t BlockBox::count() const {
  int64_t n = 1;
  for (size_t a = 0; a < begin.size(); ++a) n *= end[a] - begin[a];
  return n;
}

int64_t ExchangeRound::max_messages() const {
  return int64_t{senders} * receivers - std::min(senders, receivers);
}

std::vector<int64_t> detail::grid_strides(const std::vector<int64_t>& numblocks) {
  std::vector<int64_t> s(numblocks.size(), 1);
  for (size_t a = numblocks.size(); a-- > 1;) s[a - 1] = s[a] * numblocks[a];
  return s;
}

namespace {

int64_t largest_bytes(const Chunks& c, int64_t itemsize) {
  int64_t n = itemsize;
  for (int64_t e : c.max_block_shape()) n *= e;
  return n;
}

struct Planner {
  Chunks old_chunks, new_chunks;
  int64_t itemsize = 1;
  ExchangeOptions options;
  std::vector<std::vector<AxisPartial>> parts;
  std::vector<int64_t> old_strides, new_strides;
  int64_t in_bytes = 1, out_bytes = 1;

  // The round's figures, from its boxes.
  void measure(ExchangeRound& r) const {
    const auto ranks = static_cast<size_t>(options.ranks);
    std::vector<int64_t> send(ranks, 0), recv(ranks, 0), nin(ranks, 0), nout(ranks, 0);
    const size_t ndim = new_chunks.ndim();
    r.output_blocks = 0;
    r.bytes = 0;
    for (const BlockBox& box : r.boxes) {
      std::vector<int64_t> extent(ndim), in_begin(ndim), in_extent(ndim), lo(ndim), hi(ndim);
      for (size_t a = 0; a < ndim; ++a) {
        extent[a] = box.end[a] - box.begin[a];
        lo[a] = new_chunks.offsets(a)[static_cast<size_t>(box.begin[a])];
        hi[a] = new_chunks.offsets(a)[static_cast<size_t>(box.end[a])];
        const auto& off = old_chunks.offsets(a);
        // Input blocks overlapping [lo, hi): the one holding lo up to the last starting before hi.
        const auto first = std::upper_bound(off.begin(), off.end() - 1, lo[a]) - 1;
        const auto last = std::lower_bound(off.begin(), off.end() - 1, std::max(hi[a], lo[a] + 1));
        in_begin[a] = first - off.begin();
        in_extent[a] = std::max<int64_t>(last - first, 1);
      }
      for_each_index(extent, [&](std::span<const int64_t> local) {
        int64_t flat = 0, bytes = itemsize;
        for (size_t a = 0; a < ndim; ++a) {
          const int64_t j = box.begin[a] + local[a];
          flat += j * new_strides[a];
          bytes *= new_chunks[a][static_cast<size_t>(j)];
        }
        const auto q = static_cast<size_t>(block_owner(flat, options.ranks));
        recv[q] += bytes;
        ++nout[q];
        ++r.output_blocks;
        r.bytes += bytes;
      });
      for_each_index(in_extent, [&](std::span<const int64_t> local) {
        int64_t flat = 0, bytes = itemsize;
        for (size_t a = 0; a < ndim; ++a) {
          const int64_t i = in_begin[a] + local[a];
          flat += i * old_strides[a];
          const auto& off = old_chunks.offsets(a);
          bytes *= std::max<int64_t>(
              std::min(hi[a], off[static_cast<size_t>(i) + 1]) - std::max(lo[a], off[static_cast<size_t>(i)]), 0);
        }
        const auto s = static_cast<size_t>(block_owner(flat, options.ranks));
        send[s] += bytes;
        ++nin[s];
      });
    }
    r.senders = r.receivers = 0;
    r.max_send = r.max_recv = r.max_peak = 0;
    const int64_t w = options.workers;
    for (size_t q = 0; q < ranks; ++q) {
      r.senders += nin[q] > 0 ? 1 : 0;
      r.receivers += nout[q] > 0 ? 1 : 0;
      r.max_send = std::max(r.max_send, send[q]);
      r.max_recv = std::max(r.max_recv, recv[q]);
      const int64_t peak = std::max({send[q] + std::min(w, nin[q]) * in_bytes, send[q] + recv[q],
                                     recv[q] + std::min(w, nout[q]) * out_bytes});
      r.max_peak = std::max(r.max_peak, peak);
    }
  }

  // Rounds of at most `capacity` output blocks: each partial's box cut into
  // tiles of at most `capacity` blocks (whole trailing axes first), tiles of
  // consecutive partials joined while they fit.
  ExchangePlan build(int64_t capacity) const {
    ExchangePlan plan;
    const size_t ndim = new_chunks.ndim();
    std::vector<int64_t> counts;
    for (const auto& axis : parts) counts.push_back(static_cast<int64_t>(axis.size()));
    ExchangeRound round;
    int64_t in_round = 0;
    auto close = [&] {
      if (round.boxes.empty()) return;
      measure(round);
      plan.peak_memory = std::max(plan.peak_memory, round.max_peak);
      plan.rounds.push_back(std::move(round));
      round = ExchangeRound{};
      in_round = 0;
    };
    for_each_index(counts, [&](std::span<const int64_t> p) {
      BlockBox whole{std::vector<int64_t>(ndim), std::vector<int64_t>(ndim)};
      std::vector<int64_t> tile(ndim), tiles(ndim);
      for (size_t a = 0; a < ndim; ++a) {
        const AxisPartial& ap = parts[a][static_cast<size_t>(p[a])];
        whole.begin[a] = ap.new_begin;
        whole.end[a] = ap.new_end;
      }
      int64_t room = capacity;
      for (size_t a = ndim; a-- > 0;) {
        const int64_t e = whole.end[a] - whole.begin[a];
        tile[a] = std::clamp<int64_t>(room, 1, std::max<int64_t>(e, 1));
        room = std::max<int64_t>(room / tile[a], 1);
        tiles[a] = (e + tile[a] - 1) / tile[a];
      }
      for_each_index(tiles, [&](std::span<const int64_t> k) {
        BlockBox box = whole;
        for (size_t a = 0; a < ndim; ++a) {
          box.begin[a] = whole.begin[a] + k[a] * tile[a];
          box.end[a] = std::min(box.begin[a] + tile[a], whole.end[a]);
        }
        const int64_t n = box.count();
        if (in_round > 0 && in_round + n > capacity) close();
        in_round += n;
        round.boxes.push_back(std::move(box));
      });
    });
    close();
    return plan;
  }
};

}  // namespace

ExchangePlan plan_exchange(const ChunkSizes& old_sizes, const ChunkSizes& new_sizes, int64_t itemsize,
                           const ExchangeOptions& options) {
  if (options.ranks < 1 || options.workers < 1 || options.max_mem < 1 || itemsize < 1) {
    throw ChunkError(absl::StrCat("plan_exchange: expected ranks, workers, max_mem and itemsize of at least 1, found ",
                                  options.ranks, ", ", options.workers, ", ", options.max_mem, " and ", itemsize));
  }
  Planner p;
  const std::vector<AxisMap> maps = old_to_new(old_sizes, new_sizes);  // checks the chunkings
  p.old_chunks = Chunks(old_sizes);
  p.new_chunks = Chunks(new_sizes);
  p.itemsize = itemsize;
  p.options = options;
  p.parts = partials(maps);
  p.old_strides = detail::grid_strides(p.old_chunks.numblocks());
  p.new_strides = detail::grid_strides(p.new_chunks.numblocks());
  p.in_bytes = largest_bytes(p.old_chunks, itemsize);
  p.out_bytes = std::max<int64_t>(largest_bytes(p.new_chunks, itemsize), 1);
  // First guess: each rank's share of a round is a send and a receive buffer
  // of about its output blocks' size; cut by an eighth at a time until the
  // measured peak fits (uneven rounds, blocks held by the workers).
  int64_t capacity = std::max<int64_t>(options.max_mem / (2 * p.out_bytes), 1) * options.ranks;
  capacity = std::min(capacity, std::max<int64_t>(p.new_chunks.total_blocks(), 1));
  while (true) {
    ExchangePlan plan = p.build(capacity);
    if (plan.peak_memory <= options.max_mem) {
      plan.ranks = options.ranks;
      plan.input_blocks = p.old_chunks.total_blocks();
      plan.output_blocks = p.new_chunks.total_blocks();
      plan.input_block_bytes = p.in_bytes;
      plan.output_block_bytes = largest_bytes(p.new_chunks, itemsize);
      plan.total_bytes = itemsize;
      for (int64_t e : p.new_chunks.shape()) plan.total_bytes *= e;
      return plan;
    }
    if (capacity == 1) {
      throw ChunkError(absl::StrCat("rechunk across ranks: max_mem of ", options.max_mem,
                                    " bytes per rank cannot hold a round of one output block (input blocks of ",
                                    p.in_bytes, " bytes, output blocks of ", p.out_bytes, ", ", options.workers,
                                    " workers); expected at least ", plan.peak_memory,
                                    " bytes, or smaller chunks or fewer workers"));
    }
    capacity -= std::max<int64_t>(capacity / 8, 1);
  }
}

}  // namespace tessera::array
