// reshape: numpy's reshape done block by block, with dask's rules.
//
// A block-wise reshape needs every output block to be exactly one input block
// with a new shape. In C order that holds when the new shape only merges runs of
// adjacent axes into one, or splits one axis into a run of adjacent ones, and
// the input is cut so that
//   - in a merge, every axis of the run but its first is whole inside a block
//     (or every axis but the last is cut into single elements: blocks then just
//     move), and
//   - in a split of an axis into (a, b, c), every block of that axis is a
//     multiple of b * c elements long.
// The plan walks both shapes from the last axis, as dask's reshape_rechunk
// does, and picks the input chunks of each run; the input is rechunked to them
// first (nothing happens when it is already cut so), then each input block
// becomes the output block of the same C-order position. The chunk choices are
// dask's, so a pipeline ported from dask keeps its block sizes. An array in one
// block can take any new shape of its size.
#include <optional>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>

#include "array/ops/axes.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

using Sizes = std::vector<int64_t>;

//! The chunks to cut the input into, and the output's chunks.
struct ReshapePlan {
  std::vector<Sizes> in, out;
};

// The first axis of a merge's run: a merge into `extent` ending at axis `last`
// of `shape` (all extents >= 1, so products only grow leftwards); nullopt when
// no run multiplies to exactly `extent`.
std::optional<size_t> run_start(const Shape& shape, size_t last, int64_t extent) {
  int64_t p = shape[last];
  size_t first = last;
  while (p < extent && first > 0) p *= shape[--first];
  if (p != extent) return std::nullopt;
  return first;
}

// Each block cut into pieces of about size/factor (at least 1) elements, the
// remainder joined to the last piece, as dask's expand_tuple: the first axis
// of a merged run takes more, smaller blocks so the merged blocks do not grow
// by the whole factor.
Sizes split_blocks(const Sizes& sizes, int64_t factor) {
  if (factor == 1) return sizes;
  Sizes out;
  for (int64_t c : sizes) {
    // The piece is c/factor when that is at least 1; a further piece is cut while
    // at least two pieces' worth is left (x >= 2 c / factor, in integers).
    const bool small = c < factor;
    const int64_t piece = small ? 1 : c / factor;
    int64_t x = c;
    while (small ? x >= 2 : x * factor - c >= c) {
      out.push_back(piece);
      x -= piece;
    }
    if (x > 0) out.push_back(x);
  }
  return out;
}

// The blocks regrouped into multiples of `unit` elements (each boundary moved
// right to the next multiple), as dask's contract_tuple: the axis being split
// needs blocks made of whole rows of the new inner axes.
Sizes multiples_of(const Sizes& sizes, int64_t unit) {
  Sizes out;
  int64_t carried = 0;
  for (int64_t c : sizes) {
    const int64_t all = c + carried;
    if (all >= unit) out.push_back(all / unit * unit);
    carried = all % unit;
  }
  return out;
}

bool single_elements(const Sizes& sizes) {
  for (int64_t c : sizes) {
    if (c != 1) return false;
  }
  return true;
}

// dask's reshape_rechunk over shapes without zero extents; nullopt when the new
// shape is not a series of merges and splits of adjacent axes.
std::optional<ReshapePlan> plan_reshape(const Shape& from, const Shape& to, const Chunks& chunks) {
  ReshapePlan plan{std::vector<Sizes>(from.size()), std::vector<Sizes>(to.size())};
  // `i` and `o`: how many axes of each shape are still to place, from the end.
  size_t i = from.size(), o = to.size();
  while (i > 0 || o > 0) {
    // Once one side is used up, the other has only axes of length 1 left.
    const int64_t din = i > 0 ? from[i - 1] : 1, dout = o > 0 ? to[o - 1] : 1;
    if (i > 0 && o > 0 && din == dout) {
      plan.in[i - 1] = plan.out[o - 1] = chunks[i - 1];
      --i, --o;
    } else if (i > 0 && din == 1) {
      plan.in[--i] = {1};
    } else if (o > 0 && dout == 1) {
      plan.out[--o] = {1};
    } else if (din < dout) {
      // Axes [first, i) merge into output axis o - 1.
      const size_t last = i - 1;
      const std::optional<size_t> first = run_start(from, last, dout);
      if (!first) return std::nullopt;
      bool blocks_move = true;  // dask asks this of every axis before `last`, not only the run's
      for (size_t k = 0; k < last; ++k) blocks_move = blocks_move && single_elements(chunks[k]);
      Sizes& out = plan.out[o - 1];
      if (blocks_move) {
        for (size_t k = *first; k <= last; ++k) plan.in[k] = chunks[k];
        for (int64_t r = detail::product(from, *first, last); r > 0; --r) {
          out.insert(out.end(), chunks[last].begin(), chunks[last].end());
        }
      } else {
        int64_t inner_blocks = 1;
        for (size_t k = *first + 1; k <= last; ++k) {
          plan.in[k] = {from[k]};
          inner_blocks *= chunks.numblocks(k);
        }
        plan.in[*first] = split_blocks(chunks[*first], inner_blocks);
        const int64_t inner = detail::product(from, *first + 1, last + 1);
        for (int64_t c : plan.in[*first]) out.push_back(c * inner);
      }
      i = *first, --o;
    } else {
      // Input axis i - 1 splits into output axes [first, o).
      const size_t last = o - 1;
      const std::optional<size_t> first = run_start(to, last, din);
      if (!first) return std::nullopt;
      const int64_t inner = detail::product(to, *first + 1, last + 1);
      plan.in[i - 1] = multiples_of(chunks[i - 1], inner);
      for (size_t k = *first + 1; k <= last; ++k) plan.out[k] = {to[k]};
      for (int64_t c : plan.in[i - 1]) plan.out[*first].push_back(c / inner);
      o = *first, --i;
    }
  }
  return plan;
}

// `shape` with its -1 replaced by the extent that keeps `x`'s size; Error for a
// second -1, another negative extent, or a size that cannot match.
Shape resolve_shape(const Array& x, const Shape& shape) {
  int unknown = 0;
  int64_t known = 1;
  bool overflow = false;
  for (int64_t e : shape) {
    if (e == -1) {
      ++unknown;
    } else if (e < 0) {
      throw Error(absl::StrCat("reshape: extent ", e, " in ", shape_str(shape),
                               " is negative (only -1 may stand for an extent to infer)"));
    } else {
      overflow = overflow || __builtin_mul_overflow(known, e, &known);
    }
  }
  if (unknown > 1) {
    throw Error(
        absl::StrCat("reshape: only one extent can be -1 (inferred), found ", unknown, " in ", shape_str(shape)));
  }
  const int64_t size = x.size();
  const std::string what = absl::StrCat("reshape: cannot reshape an array of shape ", shape_str(x.shape()), " (",
                                        size, " elements) into shape ", shape_str(shape));
  if (overflow) throw Error(absl::StrCat(what, ": its extents multiply past 2^63"));
  Shape out = shape;
  if (unknown == 1) {
    if (known == 0) throw Error(absl::StrCat(what, ": -1 is undetermined when the other extents multiply to 0"));
    if (size % known != 0) throw Error(absl::StrCat(what, ": ", size, " is not a multiple of ", known));
    for (int64_t& e : out) {
      if (e == -1) e = size / known;
    }
  } else if (known != size) {
    throw Error(absl::StrCat(what, " (", known, " elements)"));
  }
  return out;
}

}  // namespace

Array reshape(const Array& x, const Shape& new_shape) {
  const Shape shape = resolve_shape(x, new_shape);
  if (shape == x.shape()) return x;
  // One block (or no elements, which one block holds) takes any shape.
  Array in = x.size() == 0 ? rechunk(x, -1) : x;
  std::vector<Sizes> out_sizes;
  if (in.chunks().total_blocks() == 1) {
    for (int64_t e : shape) out_sizes.push_back({e});
  } else {
    std::optional<ReshapePlan> plan = plan_reshape(x.shape(), shape, x.chunks());
    if (!plan) {
      throw Error(absl::StrCat("reshape: cannot reshape an array of shape ", shape_str(x.shape()), " into ",
                               shape_str(shape), " block by block: only merging adjacent axes into one or splitting "
                               "one axis into adjacent ones is supported (as in dask); reshape in several steps, or "
                               "rechunk to one block first"));
    }
    in = rechunk(x, Chunks(std::move(plan->in)));
    out_sizes = std::move(plan->out);
  }
  const Chunks chunks(std::move(out_sizes));
  const std::string out = absl::StrCat("reshape-", token({"reshape", in.name(), shape_str(shape)}));
  // Input and output blocks pair up in C order of their grids.
  const std::vector<Key> sources = in.keys();
  Graph layer;
  size_t next = 0;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    Shape block = chunks.block_shape(std::vector<int64_t>(idx.begin(), idx.end()));
    auto f = [block](const NDArray& b) { return c_contiguous(b).reshape(block); };
    layer.put(Key(out, idx), Task(fn("reshape", std::move(f)), ref(sources[next++])));
  });
  return Array(out, chunks, x.dtype(), std::move(layer), {in});
}

}  // namespace tessera::array
