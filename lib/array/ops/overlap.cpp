// map_overlap: per output block, getitem tasks cut the halo out of the
// neighbouring blocks (views), and one task assembles the extended block,
// runs the kernel and trims the halo off.
#include "tessera/array/ops/overlap.hpp"

#include <algorithm>
#include <cstring>
#include <memory>
#include <utility>

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "array/rechunk/blocks.hpp"
#include "tessera/array/core/grid.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

constexpr int32_t kConstant = -1;

// Where an extended block's coordinates along one axis come from.
struct AxisHalo {
  int64_t left = 0;             // halo elements before the block
  std::vector<int64_t> blocks;  // source blocks along the axis, ascending
  std::vector<int64_t> lo, hi;  // per source block: the coordinates read, [lo, hi) in the block
  std::vector<int32_t> which;   // per extended coordinate: index into `blocks`, or kConstant
  std::vector<int64_t> at;      // per extended coordinate: its position in that block's piece
};

struct Assembly {
  DType dtype;
  Shape shape;  // of the extended block
  std::vector<AxisHalo> axes;
  NDArray constant;  // one element of dtype
};

// The array coordinate that coordinate `c` (possibly outside [0, n)) reads,
// or -1 for the constant. Depths are at most n where this is called.
int64_t source_of(int64_t c, int64_t n, Boundary b) {
  if (c >= 0 && c < n) return c;
  switch (b) {
    case Boundary::periodic: return c < 0 ? c + n : c - n;
    case Boundary::reflect: return c < 0 ? -c - 1 : 2 * n - 1 - c;
    case Boundary::nearest: return c < 0 ? 0 : n - 1;
    default: return -1;  // constant; none never asks
  }
}

AxisHalo axis_halo(const std::vector<int64_t>& offsets, int64_t block, int64_t depth, Boundary b) {
  const int64_t n = offsets.back();
  int64_t first = offsets[static_cast<size_t>(block)] - depth;
  int64_t end = offsets[static_cast<size_t>(block) + 1] + depth;
  if (b == Boundary::none) {
    first = std::max<int64_t>(first, 0);
    end = std::min(end, n);
  }
  AxisHalo h;
  h.left = offsets[static_cast<size_t>(block)] - first;
  std::vector<std::pair<int64_t, int64_t>> src;  // (block, coordinate in it) per extended coordinate
  for (int64_t c = first; c < end; ++c) {
    const int64_t s = source_of(c, n, b);
    if (s < 0) {
      src.emplace_back(-1, 0);
      continue;
    }
    const auto j = std::upper_bound(offsets.begin(), offsets.end(), s) - offsets.begin() - 1;
    src.emplace_back(j, s - offsets[static_cast<size_t>(j)]);
    if (std::find(h.blocks.begin(), h.blocks.end(), j) == h.blocks.end()) h.blocks.push_back(j);
  }
  std::sort(h.blocks.begin(), h.blocks.end());
  h.lo.assign(h.blocks.size(), INT64_MAX);
  h.hi.assign(h.blocks.size(), 0);
  for (const auto& [j, at] : src) {
    if (j < 0) continue;
    const size_t w = static_cast<size_t>(std::lower_bound(h.blocks.begin(), h.blocks.end(), j) - h.blocks.begin());
    h.lo[w] = std::min(h.lo[w], at);
    h.hi[w] = std::max(h.hi[w], at + 1);
  }
  for (const auto& [j, at] : src) {
    if (j < 0) {
      h.which.push_back(kConstant);
      h.at.push_back(0);
      continue;
    }
    const size_t w = static_cast<size_t>(std::lower_bound(h.blocks.begin(), h.blocks.end(), j) - h.blocks.begin());
    h.which.push_back(static_cast<int32_t>(w));
    h.at.push_back(at - h.lo[w]);
  }
  return h;
}

// The extended block from its pieces (C order over the grid of source blocks).
// Rows along the last axis are copied in runs of consecutive elements.
NDArray assemble(const std::vector<NDArray>& pieces, const Assembly& a) {
  NDArray out = NDArray::empty(a.dtype, a.shape);
  const size_t n = a.shape.size();
  const size_t item = a.dtype.itemsize();
  const int64_t length = a.shape.back();
  const std::byte* constant = a.constant.data();
  std::byte* row = out.data();
  const std::vector<int64_t> rows(a.shape.begin(), a.shape.end() - 1);
  const AxisHalo& last = a.axes.back();
  for_each_index(rows, [&](std::span<const int64_t> idx) {
    int64_t piece = 0;
    bool outside = false;
    for (size_t k = 0; k + 1 < n && !outside; ++k) {
      const int32_t w = a.axes[k].which[static_cast<size_t>(idx[k])];
      outside = w == kConstant;
      piece = piece * static_cast<int64_t>(a.axes[k].blocks.size()) + w;
    }
    for (int64_t e = 0; e < length;) {
      const int32_t w = last.which[static_cast<size_t>(e)];
      if (outside || w == kConstant) {
        std::memcpy(row + e * item, constant, item);
        ++e;
        continue;
      }
      const NDArray& p = pieces[static_cast<size_t>(piece * static_cast<int64_t>(last.blocks.size()) + w)];
      const std::byte* base = p.data();
      for (size_t k = 0; k + 1 < n; ++k) base += a.axes[k].at[static_cast<size_t>(idx[k])] * p.strides()[k];
      const int64_t start = last.at[static_cast<size_t>(e)];
      int64_t run = 1;
      while (e + run < length && last.which[static_cast<size_t>(e + run)] == w &&
             last.at[static_cast<size_t>(e + run)] == start + run) {
        ++run;
      }
      const int64_t stride = p.strides().back();
      if (stride == static_cast<int64_t>(item)) {
        std::memcpy(row + e * item, base + start * stride, static_cast<size_t>(run) * item);
      } else {
        for (int64_t r = 0; r < run; ++r) std::memcpy(row + (e + r) * item, base + (start + r) * stride, item);
      }
      e += run;
    }
    row += length * static_cast<int64_t>(item);
  });
  return out;
}

// Chunks of at least `depth` along an axis: neighbours merged left to right,
// a short last one into the one before.
std::vector<int64_t> at_least(const std::vector<int64_t>& sizes, int64_t depth) {
  std::vector<int64_t> out;
  int64_t pending = 0;
  for (int64_t s : sizes) {
    pending += s;
    if (pending >= depth) {
      out.push_back(pending);
      pending = 0;
    }
  }
  if (pending > 0) {
    if (out.empty()) out.push_back(pending);
    else out.back() += pending;
  }
  return out;
}

}  // namespace

Array map_overlap(std::function<NDArray(const NDArray&)> kernel, const Array& x, const OverlapOptions& options) {
  const std::string& name = options.name;
  const size_t nd = x.ndim();
  if (nd == 0) throw ChunkError(absl::StrCat(name, ": needs an array of at least one dimension, found a 0-d array"));
  if (options.depth.size() != 1 && options.depth.size() != nd) {
    throw ChunkError(absl::StrCat(name, ": expected one depth or one per axis (", nd, "), found ",
                                  options.depth.size()));
  }
  std::vector<int64_t> depth(nd);
  for (size_t k = 0; k < nd; ++k) depth[k] = options.depth.size() == 1 ? options.depth[0] : options.depth[k];
  const bool wraps = options.boundary == Boundary::reflect || options.boundary == Boundary::periodic;
  Array in = x;
  std::vector<AxisChunks> merged;
  bool rechunk_needed = false;
  for (size_t k = 0; k < nd; ++k) {
    const int64_t n = x.shape()[k];
    if (depth[k] < 0) throw ChunkError(absl::StrCat(name, ": expected depths of at least 0, found ", depth[k]));
    if (wraps && depth[k] > n) {
      throw ChunkError(absl::StrCat(name, ": depth ", depth[k], " along axis ", k, " is more than its ", n,
                                    " elements, which reflect and periodic boundaries cannot fill"));
    }
    const std::vector<int64_t>& sizes = x.chunks()[k];
    const int64_t smallest = sizes.empty() ? 0 : *std::min_element(sizes.begin(), sizes.end());
    merged.emplace_back(at_least(sizes, depth[k]));
    if (n > 0 && smallest < depth[k]) {
      if (!options.allow_rechunk) {
        throw ChunkError(absl::StrCat(name, ": depth ", depth[k], " along axis ", k,
                                      " is more than its smallest chunk (", smallest, " of ", x.chunks().str(),
                                      "); allow_rechunk merges chunks, or rechunk first"));
      }
      rechunk_needed = true;
    }
  }
  if (rechunk_needed) in = rechunk(in, ChunkSpec(std::move(merged)));
  const DType dtype = options.dtype.value_or(in.dtype());
  const NDArray constant = NDArray::full(in.dtype(), {}, options.constant);
  const std::string tok = unique_token();  // a kernel is opaque
  const std::string out = absl::StrCat(name, "-", tok), halo = absl::StrCat(name, "-halo-", tok);
  auto f = std::make_shared<const std::function<NDArray(const NDArray&)>>(std::move(kernel));
  Graph layer;
  for_each_block(in.chunks(), [&](std::span<const int64_t> idx) {
    auto a = std::make_shared<Assembly>();
    a->dtype = in.dtype();
    a->constant = constant;
    std::vector<int64_t> grid;
    for (size_t k = 0; k < nd; ++k) {
      a->axes.push_back(axis_halo(in.chunks().offsets(k), idx[k], depth[k], options.boundary));
      a->shape.push_back(static_cast<int64_t>(a->axes[k].which.size()));
      grid.push_back(static_cast<int64_t>(a->axes[k].blocks.size()));
    }
    ArgList pieces;
    for_each_index(grid, [&](std::span<const int64_t> g) {
      std::vector<int64_t> block(nd), start(nd), shape(nd);
      for (size_t k = 0; k < nd; ++k) {
        const AxisHalo& h = a->axes[k];
        block[k] = h.blocks[static_cast<size_t>(g[k])];
        start[k] = h.lo[static_cast<size_t>(g[k])];
        shape[k] = h.hi[static_cast<size_t>(g[k])] - start[k];
      }
      std::vector<int64_t> key(idx.begin(), idx.end());
      key.push_back(static_cast<int64_t>(pieces.items.size()));
      const Key piece(halo, key);
      layer.put(piece, Task(fn("getitem", [](const NDArray& b, const std::vector<int64_t>& s,
                                             const std::vector<int64_t>& n) { return detail::box_view(b, s, n); }),
                            ref(in.block_key(block)), std::move(start), std::move(shape)));
      pieces.items.emplace_back(ref(piece));
    });
    const Key key(out, idx);
    const std::vector<int64_t> index(idx.begin(), idx.end());
    const Shape block_shape = in.chunks().block_shape(index);
    auto task = [f, a, key, dtype, block_shape, name](const std::vector<NDArray>& parts) {
      const NDArray extended = assemble(parts, *a);
      const NDArray r = (*f)(extended);
      check_block(r, a->shape, dtype, key, name);
      std::vector<Slice> trim;
      for (size_t k = 0; k < block_shape.size(); ++k) {
        trim.push_back(Slice{a->axes[k].left, a->axes[k].left + block_shape[k]});
      }
      return c_contiguous(r.slice(trim));
    };
    layer.put(key, Task(fn(name, std::move(task)), std::move(pieces)));
  });
  return Array(out, in.chunks(), dtype, std::move(layer), {in});
}

}  // namespace tessera::array
