#include "tessera/array/ops/slicing.hpp"

#include <string>

#include <absl/strings/str_cat.h>

#include "tessera/array/core/grid.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

int64_t floor_div(int64_t a, int64_t b) {
  int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
int64_t ceil_div(int64_t a, int64_t b) { return -floor_div(-a, b); }

// One output block along an axis: part of input block `block`.
struct SlicePiece {
  int64_t block;
  Slice local;   // within the input block
  int64_t size;  // elements it gives
  bool whole;    // the whole input block, unchanged
};

// The pieces of one axis of `length` cut by `sizes` under slice `s`, in output order.
std::vector<SlicePiece> axis_pieces(const Slice& s, const std::vector<int64_t>& sizes, int64_t length, size_t axis) {
  std::vector<int64_t> off{0};
  for (int64_t n : sizes) off.push_back(off.back() + n);
  std::vector<SlicePiece> pieces;
  if (s.drop_axis) {
    int64_t i = s.start.value_or(0);
    if (i < -length || i >= length) {
      throw Error(absl::StrCat("index ", i, " is out of bounds for axis ", axis, " with size ", length));
    }
    if (i < 0) i += length;
    int64_t b = 0;
    while (off[b + 1] <= i) ++b;
    pieces.push_back({b, Slice::index(i - off[b]), 1, false});
    return pieces;
  }
  const int64_t step = s.step;
  if (step == 0) throw Error(absl::StrCat("slice step cannot be zero (axis ", axis, ")"));
  // Python's slice.indices(length).
  auto clamp = [&](std::optional<int64_t> v, int64_t fallback, int64_t lo, int64_t hi) {
    if (!v) return fallback;
    int64_t x = *v < 0 ? *v + length : *v;
    return std::min(std::max(x, lo), hi);
  };
  const int64_t start = step > 0 ? clamp(s.start, 0, 0, length) : clamp(s.start, length - 1, -1, length - 1);
  const int64_t stop = step > 0 ? clamp(s.stop, length, 0, length) : clamp(s.stop, -1, -1, length - 1);
  const int64_t count = step > 0 ? std::max<int64_t>(0, ceil_div(stop - start, step))
                                 : std::max<int64_t>(0, ceil_div(start - stop, -step));
  const int64_t nb = static_cast<int64_t>(sizes.size());
  for (int64_t k = 0; k < nb; ++k) {
    const int64_t b = step > 0 ? k : nb - 1 - k;
    // Positions start + m*step that fall in [off[b], off[b+1]).
    int64_t lo, hi;
    if (step > 0) {
      lo = ceil_div(off[b] - start, step), hi = ceil_div(off[b + 1] - start, step);
    } else {
      lo = floor_div(start - off[b + 1], -step) + 1, hi = floor_div(start - off[b], -step) + 1;
    }
    lo = std::max<int64_t>(lo, 0), hi = std::min(hi, count);
    if (hi <= lo) continue;
    const int64_t first = start + lo * step - off[b], n = hi - lo;
    const int64_t last = first + (n - 1) * step;
    std::optional<int64_t> end = step > 0 ? std::optional<int64_t>(last + 1)
                                          : (last - 1 < 0 ? std::nullopt : std::optional<int64_t>(last - 1));
    const bool whole = step == 1 && first == 0 && n == sizes[b];
    pieces.push_back({b, Slice{first, end, step}, n, whole});
  }
  if (pieces.empty()) pieces.push_back({0, Slice{0, 0, 1}, 0, false});  // an empty axis: one empty block
  return pieces;
}

std::string slice_text(const Slice& s) {
  auto opt = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string(); };
  if (s.drop_axis) return std::to_string(s.start.value_or(0));
  return absl::StrCat(opt(s.start), ":", opt(s.stop), ":", s.step);
}

}  // namespace

Array slice(const Array& x, const std::vector<Slice>& slices) {
  const size_t ndim = x.ndim();
  if (slices.size() > ndim) {
    throw Error(absl::StrCat("too many indices: ", slices.size(), " slices for an array of ", ndim,
                             " dimension(s) ('", x.name(), "')"));
  }
  const Shape shape = x.shape();
  std::vector<std::vector<SlicePiece>> pieces;
  std::vector<std::vector<int64_t>> out_sizes;
  std::string text;
  for (size_t k = 0; k < ndim; ++k) {
    const Slice s = k < slices.size() ? slices[k] : Slice::all();
    pieces.push_back(axis_pieces(s, x.chunks()[k], shape[k], k));
    absl::StrAppend(&text, slice_text(s), ",");
    if (s.drop_axis) continue;
    std::vector<int64_t> sizes;
    for (const SlicePiece& p : pieces.back()) sizes.push_back(p.size);
    out_sizes.push_back(std::move(sizes));
  }
  const std::string out = absl::StrCat("getitem-", token({"getitem", x.name(), text}));
  Graph layer;
  std::vector<int64_t> grid;
  for (const auto& p : pieces) grid.push_back(static_cast<int64_t>(p.size()));
  for_each_index(grid, [&](std::span<const int64_t> g) {
    std::vector<int64_t> in_idx, out_idx;
    std::vector<Slice> local;
    bool whole = true;
    for (size_t k = 0; k < ndim; ++k) {
      const SlicePiece& p = pieces[k][static_cast<size_t>(g[k])];
      in_idx.push_back(p.block);
      local.push_back(p.local);
      whole = whole && p.whole;
      if (!p.local.drop_axis) out_idx.push_back(g[k]);
    }
    if (whole) {
      layer.alias(Key(out, out_idx), x.block_key(in_idx));
    } else {
      auto f = [local](const NDArray& b) { return b.slice(local); };
      layer.put(Key(out, out_idx), Task(fn("getitem", std::move(f)), ref(x.block_key(in_idx))));
    }
  });
  return Array(out, Chunks(out_sizes), x.dtype(), std::move(layer), {x});
}

}  // namespace tessera::array
