// Shape operations on Arrays: block-grid permutations, axes of length 1 added
// or removed, and joins; every block is a view or an alias of an input block.
#include "tessera/array/ops/shape.hpp"

#include <map>
#include <string>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/block.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "array/ops/axes.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

using detail::axis_index;

std::string join_ints(const std::vector<int>& v) { return absl::StrJoin(v, ","); }

// The block view that drops the axes marked in `drop` (each of length 1).
NDArray drop_axes(const NDArray& b, const std::vector<bool>& drop) {
  std::vector<Slice> s;
  for (bool d : drop) s.push_back(d ? Slice::index(0) : Slice::all());
  return b.slice(s);
}

// A view of `b` with a new axis of length 1 at `axis`.
NDArray insert_axis(const NDArray& b, size_t axis) {
  Shape shape = b.shape();
  Strides strides = b.strides();
  shape.insert(shape.begin() + static_cast<long>(axis), 1);
  strides.insert(strides.begin() + static_cast<long>(axis), 0);
  return NDArray(b.buffer(), b.dtype(), std::move(shape), std::move(strides), b.offset());
}

}  // namespace

Array transpose(const Array& x, std::optional<std::vector<int>> axes) {
  const size_t nd = x.ndim();
  std::vector<size_t> perm(nd);
  if (axes) {
    std::vector<bool> seen(nd, false);
    bool ok = axes->size() == nd;
    for (size_t i = 0; ok && i < nd; ++i) {
      const int a = (*axes)[i];
      ok = a >= -static_cast<int>(nd) && a < static_cast<int>(nd);
      if (!ok) break;
      perm[i] = static_cast<size_t>(a < 0 ? a + static_cast<int>(nd) : a);
      ok = !seen[perm[i]];
      seen[perm[i]] = true;
    }
    if (!ok) {
      throw Error(absl::StrCat("transpose: expected a permutation of the ", nd, " axes of an array of shape ",
                               shape_str(x.shape()), ", found (", absl::StrJoin(*axes, ", "), ")"));
    }
  } else {
    for (size_t i = 0; i < nd; ++i) perm[i] = nd - 1 - i;
  }
  bool identity = true;
  for (size_t i = 0; i < nd; ++i) identity = identity && perm[i] == i;
  if (identity) return x;
  std::vector<std::vector<int64_t>> sizes;
  std::vector<int> text;
  for (size_t a : perm) {
    sizes.push_back(x.chunks()[a]);
    text.push_back(static_cast<int>(a));
  }
  const Chunks chunks(std::move(sizes));
  const std::string out = absl::StrCat("transpose-", token({"transpose", x.name(), join_ints(text)}));
  Graph layer;
  auto f = [perm](const NDArray& b) { return b.transpose(perm); };
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> in(nd);
    for (size_t i = 0; i < nd; ++i) in[perm[i]] = idx[i];
    layer.put(Key(out, idx), Task(fn("transpose", f), ref(x.block_key(in))));
  });
  return Array(out, chunks, x.dtype(), std::move(layer), {x});
}

Array moveaxis(const Array& x, int source, int destination) {
  const size_t src = axis_index(source, x.ndim(), "moveaxis");
  const size_t dst = axis_index(destination, x.ndim(), "moveaxis");
  std::vector<int> order;
  for (size_t a = 0; a < x.ndim(); ++a) {
    if (a != src) order.push_back(static_cast<int>(a));
  }
  order.insert(order.begin() + static_cast<long>(dst), static_cast<int>(src));
  return transpose(x, order);
}

Array swapaxes(const Array& x, int a, int b) {
  const size_t i = axis_index(a, x.ndim(), "swapaxes"), j = axis_index(b, x.ndim(), "swapaxes");
  std::vector<int> order;
  for (size_t k = 0; k < x.ndim(); ++k) order.push_back(static_cast<int>(k));
  std::swap(order[i], order[j]);
  return transpose(x, order);
}

Array squeeze(const Array& x, std::optional<std::vector<int>> axes) {
  const Shape shape = x.shape();
  std::vector<bool> drop(x.ndim(), false);
  if (axes) {
    for (int a : *axes) {
      const size_t k = axis_index(a, x.ndim(), "squeeze");
      if (shape[k] != 1) {
        throw Error(absl::StrCat("squeeze: cannot remove axis ", a, " of length ", shape[k],
                                 " (only axes of length 1 can be removed) from an array of shape ", shape_str(shape)));
      }
      drop[k] = true;
    }
  } else {
    for (size_t k = 0; k < shape.size(); ++k) drop[k] = shape[k] == 1;
  }
  std::vector<std::vector<int64_t>> sizes;
  std::string mask;
  for (size_t k = 0; k < drop.size(); ++k) {
    if (!drop[k]) sizes.push_back(x.chunks()[k]);
    mask += drop[k] ? '1' : '0';
  }
  if (sizes.size() == x.ndim()) return x;
  const Chunks chunks(std::move(sizes));
  const std::string out = absl::StrCat("squeeze-", token({"squeeze", x.name(), mask}));
  Graph layer;
  auto f = [drop](const NDArray& b) { return drop_axes(b, drop); };
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> in;
    size_t j = 0;
    for (size_t k = 0; k < drop.size(); ++k) in.push_back(drop[k] ? 0 : idx[j++]);
    layer.put(Key(out, idx), Task(fn("squeeze", f), ref(x.block_key(in))));
  });
  return Array(out, chunks, x.dtype(), std::move(layer), {x});
}

Array expand_dims(const Array& x, int axis) {
  const size_t k = axis_index(axis, x.ndim() + 1, "expand_dims");
  std::vector<std::vector<int64_t>> sizes = x.chunks().sizes();
  sizes.insert(sizes.begin() + static_cast<long>(k), std::vector<int64_t>{1});
  const Chunks chunks(std::move(sizes));
  const std::string out = absl::StrCat("expand_dims-", token({"expand_dims", x.name(), std::to_string(k)}));
  Graph layer;
  auto f = [k](const NDArray& b) { return insert_axis(b, k); };
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> in(idx.begin(), idx.end());
    in.erase(in.begin() + static_cast<long>(k));
    layer.put(Key(out, idx), Task(fn("expand_dims", f), ref(x.block_key(in))));
  });
  return Array(out, chunks, x.dtype(), std::move(layer), {x});
}

Array concatenate(const std::vector<Array>& arrays, int axis) {
  if (arrays.empty()) throw Error("concatenate: needs at least one array, found none");
  const Array& first = arrays.front();
  if (first.ndim() == 0) throw Error("concatenate: zero-dimensional arrays cannot be concatenated");
  const size_t k = axis_index(axis, first.ndim(), "concatenate");
  DType dtype = first.dtype();
  for (size_t i = 1; i < arrays.size(); ++i) {
    const Array& a = arrays[i];
    bool same = a.ndim() == first.ndim();
    for (size_t d = 0; same && d < a.ndim(); ++d) same = d == k || a.shape()[d] == first.shape()[d];
    if (!same) {
      throw Error(absl::StrCat("concatenate: array ", i, " has shape ", shape_str(a.shape()),
                               ", which does not match array 0's ", shape_str(first.shape()), " except along axis ",
                               k));
    }
    dtype = promote_types(dtype, a.dtype());
  }
  // Every input cut like the first on the other axes, then cast to the common dtype.
  std::vector<Array> inputs;
  std::vector<std::vector<int64_t>> sizes = first.chunks().sizes();
  sizes[k].clear();
  std::vector<std::string> parts{"concatenate", std::to_string(k), dtype.str()};
  for (const Array& a : arrays) {
    std::map<size_t, AxisChunks> target;
    for (size_t d = 0; d < a.ndim(); ++d) {
      if (d != k) target.emplace(d, AxisChunks(first.chunks()[d]));
    }
    Array in = astype(rechunk(a, target), dtype);
    for (int64_t s : in.chunks()[k]) {
      if (s > 0 || in.chunks()[k].size() == 1) sizes[k].push_back(s);
    }
    parts.push_back(in.name());
    inputs.push_back(std::move(in));
  }
  // Zero-length inputs add no blocks (unless all are empty: then one empty block).
  std::vector<int64_t> along;
  for (int64_t s : sizes[k]) {
    if (s > 0) along.push_back(s);
  }
  if (along.empty()) along.push_back(0);
  sizes[k] = along;
  const Chunks chunks(std::move(sizes));
  std::string tok;
  for (const std::string& p : parts) absl::StrAppend(&tok, p, "/");
  const std::string out = absl::StrCat("concatenate-", token({tok}));
  // Output block j along the axis: input `source[j].first`'s block `source[j].second`.
  std::vector<std::pair<size_t, int64_t>> source;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const auto& s = inputs[i].chunks()[k];
    for (size_t b = 0; b < s.size(); ++b) {
      if (s[b] > 0) source.emplace_back(i, static_cast<int64_t>(b));
    }
  }
  if (source.empty()) source.emplace_back(0, 0);
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> in(idx.begin(), idx.end());
    const auto [i, b] = source[static_cast<size_t>(idx[k])];
    in[k] = b;
    layer.alias(Key(out, idx), inputs[i].block_key(in));
  });
  return Array(out, chunks, dtype, std::move(layer), inputs);
}

Array stack(const std::vector<Array>& arrays, int axis) {
  if (arrays.empty()) throw Error("stack: needs at least one array, found none");
  for (size_t i = 1; i < arrays.size(); ++i) {
    if (arrays[i].shape() != arrays[0].shape()) {
      throw Error(absl::StrCat("stack: all arrays must have one shape, but array ", i, " has shape ",
                               shape_str(arrays[i].shape()), " and array 0 ", shape_str(arrays[0].shape())));
    }
  }
  const size_t k = axis_index(axis, arrays[0].ndim() + 1, "stack");
  std::vector<Array> expanded;
  for (const Array& a : arrays) expanded.push_back(expand_dims(a, static_cast<int>(k)));
  return concatenate(expanded, static_cast<int>(k));
}

}  // namespace tessera::array
