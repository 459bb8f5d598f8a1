// Planning a rechunk through intermediate chunkings.
//
// A many-to-many rechunk (rows to columns) crosses every input block with every
// output block: its graph has about (input blocks x output blocks) pieces. An
// intermediate chunking that merges blocks along the axes where the target has
// fewer blocks cuts that product, as long as the merged blocks fit under the
// byte limit. The plan follows dask's `plan_rechunk`:
//   1. merge: along each axis where the target has no more blocks than the
//      current chunking, adopt the target's blocks, best graph-size gain per
//      block-size growth first; when the limit forbids the full target, cut the
//      target's blocks to the width the limit allows;
//   2. when the limit was hit, split: along axes where the target has more
//      blocks, adopt a coarsened target (merged down to a number of blocks the
//      graph budget allows) to shrink blocks and make room for the next merge;
//   3. repeat until a step's graph is under the threshold or nothing changes.
// Each step's blocks stay under the limit, so no task of any step holds more
// than one limit-sized output block plus the inputs it reads.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <queue>
#include <string>
#include <tuple>

#include "tessera/array/rechunk/plan.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {

namespace detail {

std::vector<int64_t> divide_to_width(std::span<const int64_t> sizes, int64_t max_width) {
  max_width = std::max<int64_t>(max_width, 1);
  std::vector<int64_t> out;
  for (int64_t c : sizes) {
    const int64_t parts = (c + max_width - 1) / max_width;
    for (int64_t k = parts; k > 0; --k) {
      const int64_t n = c / k;  // near-equal parts, the smaller ones first
      out.push_back(n);
      c -= n;
    }
  }
  return out;
}

std::vector<int64_t> merge_to_number(std::span<const int64_t> sizes, int64_t max_number) {
  max_number = std::max<int64_t>(max_number, 1);
  const auto n = static_cast<int64_t>(sizes.size());
  if (n <= max_number) return {sizes.begin(), sizes.end()};

  if (std::all_of(sizes.begin(), sizes.end(), [&](int64_t s) { return s == sizes[0]; }) && sizes[0] > 0) {
    // A regular target stays regular: whole multiples of the block width, the
    // wider ones first.
    const int64_t w = sizes[0];
    const int64_t total = n * w;
    const int64_t width = w * ((total / max_number) / w);
    const int64_t wider = (total - max_number * width) / w;
    std::vector<int64_t> out(static_cast<size_t>(wider), width + w);
    out.insert(out.end(), static_cast<size_t>(max_number - wider), width);
    return out;
  }

  // Merge the neighbouring pair with the smallest sum until few enough remain.
  // A merged block is known by the index of its last original block, and ties
  // go to the leftmost pair, which is the order dask's merge_to_number takes.
  // Blocks form a linked list; heap entries of merged-away blocks are skipped.
  std::vector<int64_t> width(sizes.begin(), sizes.end());
  std::vector<int64_t> next(static_cast<size_t>(n));
  std::vector<int64_t> prev(static_cast<size_t>(n));
  std::vector<char> alive(static_cast<size_t>(n), 1);
  std::iota(next.begin(), next.end(), 1);
  std::iota(prev.begin(), prev.end(), -1);
  using Pair = std::tuple<int64_t, int64_t, int64_t>;  // (sum, left, right)
  std::priority_queue<Pair, std::vector<Pair>, std::greater<>> heap;
  for (int64_t i = 0; i + 1 < n; ++i) heap.emplace(width[i] + width[i + 1], i, i + 1);
  for (int64_t merges = n - max_number; merges > 0;) {
    auto [sum, l, r] = heap.top();
    heap.pop();
    if (!alive[l] || !alive[r] || next[l] != r || width[l] + width[r] != sum) continue;
    width[r] = sum;  // l joins r
    alive[l] = 0;
    prev[r] = prev[l];
    if (prev[r] >= 0) {
      next[prev[r]] = r;
      heap.emplace(width[prev[r]] + width[r], prev[r], r);
    }
    if (next[r] < n) heap.emplace(width[r] + width[next[r]], r, next[r]);
    --merges;
  }
  std::vector<int64_t> out;
  for (int64_t i = 0; i < n; ++i) {
    if (alive[i]) out.push_back(width[i]);
  }
  return out;
}

}  // namespace detail

namespace {

int64_t max_of(const std::vector<int64_t>& v) { return *std::max_element(v.begin(), v.end()); }

// Step 1 of the plan (see the file comment). Returns the chunking and whether
// the limit stopped an axis from reaching the target.
std::pair<ChunkSizes, bool> find_merge_rechunk(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks,
                                               double limit) {
  const size_t ndim = old_chunks.size();
  std::vector<size_t> candidates;
  std::vector<double> rank(ndim, 0.0);
  for (size_t d = 0; d < ndim; ++d) {
    const double graph_effect =
        static_cast<double>(new_chunks[d].size()) / static_cast<double>(old_chunks[d].size());
    if (graph_effect > 1.0) continue;
    double block_effect = static_cast<double>(max_of(new_chunks[d])) /
                          static_cast<double>(std::max<int64_t>(max_of(old_chunks[d]), 1));
    if (block_effect == 1.0) block_effect += 1e-9;
    // Graph shrinkage per unit of block growth: the most negative ratio first.
    rank[d] = block_effect > 0 ? std::log(graph_effect) / std::log(block_effect) : 0.0;
    candidates.push_back(d);
  }
  std::stable_sort(candidates.begin(), candidates.end(), [&](size_t a, size_t b) { return rank[a] < rank[b]; });

  ChunkSizes chunks = old_chunks;
  int64_t largest = largest_block_size(old_chunks);
  bool limit_hit = false;
  for (size_t d : candidates) {
    const int64_t old_width = std::max<int64_t>(max_of(old_chunks[d]), 1);
    const int64_t merged = largest / old_width * max_of(new_chunks[d]);
    if (static_cast<double>(merged) <= limit) {
      chunks[d] = new_chunks[d];
      largest = merged;
      continue;
    }
    // Only part of the way: the target's blocks cut to the widest the limit allows.
    const auto width = static_cast<int64_t>(limit * static_cast<double>(old_width) / static_cast<double>(largest));
    std::vector<int64_t> cut = detail::divide_to_width(new_chunks[d], width);
    if (cut.size() <= old_chunks[d].size()) {
      largest = largest / old_width * max_of(cut);
      chunks[d] = std::move(cut);
    }
    limit_hit = true;
  }
  return {chunks, limit_hit};
}

// Step 2 of the plan (see the file comment).
ChunkSizes find_split_rechunk(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks, double graph_limit) {
  ChunkSizes chunks = old_chunks;
  for (size_t d = 0; d < old_chunks.size(); ++d) {
    const auto graph_size = static_cast<double>(estimate_graph_size(chunks, new_chunks));
    if (graph_size > graph_limit) break;
    if (old_chunks[d].size() > new_chunks[d].size()) continue;
    const auto max_number =
        static_cast<int64_t>(static_cast<double>(old_chunks[d].size()) * graph_limit / graph_size);
    std::vector<int64_t> c = detail::merge_to_number(new_chunks[d], max_number);
    if (c.size() >= old_chunks[d].size() && max_of(c) <= max_of(old_chunks[d])) chunks[d] = std::move(c);
  }
  return chunks;
}

}  // namespace

std::vector<ChunkSizes> plan_rechunk(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks,
                                     int64_t itemsize, const PlanOptions& options) {
  const std::vector<AxisMap> maps = old_to_new(old_chunks, new_chunks);  // validates
  if (itemsize < 1) {
    throw ChunkError("plan_rechunk: expected an item size of at least 1 byte, found " + std::to_string(itemsize));
  }
  if (!(options.threshold >= 1.0)) {
    throw ChunkError("plan_rechunk: expected a threshold >= 1, found " + std::to_string(options.threshold));
  }
  // One axis, or an empty array: nothing to gain from an intermediate step.
  if (new_chunks.size() <= 1 || largest_block_size(new_chunks) == 0 || largest_block_size(old_chunks) == 0) {
    return {new_chunks};
  }
  // In elements, kept fractional as dask keeps it, so plans match dask's.
  const double limit = std::max({static_cast<double>(options.block_size_limit) / static_cast<double>(itemsize),
                                 static_cast<double>(largest_block_size(old_chunks)),
                                 static_cast<double>(largest_block_size(new_chunks))});
  const double graph_threshold =
      options.threshold * static_cast<double>(number_of_blocks(old_chunks) + number_of_blocks(new_chunks));

  std::vector<ChunkSizes> steps;
  ChunkSizes current = old_chunks;
  // dask's loop has no bound; a step count well past any plan seen keeps a
  // pathological input from cycling.
  constexpr int kMaxSteps = 32;
  for (bool first = true; steps.size() < kMaxSteps; first = false) {
    const auto graph_size = static_cast<double>(estimate_graph_size(current, new_chunks));
    if (graph_size < graph_threshold) break;
    ChunkSizes start = first ? current : find_split_rechunk(current, new_chunks, graph_size * options.threshold);
    auto [chunks, limit_hit] = find_merge_rechunk(start, new_chunks, limit);
    if ((!first && chunks == current) || chunks == new_chunks) break;
    if (chunks != current) steps.push_back(chunks);
    current = std::move(chunks);
    if (!limit_hit) break;
  }
  steps.push_back(new_chunks);
  return steps;
}

int64_t mean_shard_run_bytes(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks, int64_t itemsize) {
  const std::vector<AxisMap> maps = old_to_new(old_chunks, new_chunks);
  int64_t run = itemsize;
  for (size_t k = maps.size(); k-- > 0;) {
    int64_t pieces = 0;
    bool whole = true;
    for (size_t j = 0; j < maps[k].size(); ++j) {
      pieces += static_cast<int64_t>(maps[k][j].size());
      whole = whole && maps[k][j].size() == 1;
    }
    int64_t extent = 0;
    for (int64_t c : new_chunks[k]) extent += c;
    if (pieces == 0 || extent == 0) return 0;
    run *= std::max<int64_t>(extent / pieces, 1);
    if (!whole || run > (int64_t{1} << 40)) break;
  }
  return run;
}

RechunkMethod choose_rechunk_method(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks, double threshold) {
  const std::vector<AxisMap> maps = old_to_new(old_chunks, new_chunks);
  const double limit = threshold * static_cast<double>(number_of_blocks(old_chunks) + number_of_blocks(new_chunks));
  return static_cast<double>(count_intersections(maps)) < limit ? RechunkMethod::tasks : RechunkMethod::shuffle;
}

}  // namespace tessera::array
