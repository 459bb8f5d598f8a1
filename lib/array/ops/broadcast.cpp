// Broadcasting between Arrays: shapes, chunk unification, broadcast views.
#include "tessera/array/ops/broadcast.hpp"

#include <algorithm>
#include <map>
#include <memory>
#include <string>

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "array/ops/axes.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

[[noreturn]] void not_broadcastable(const std::vector<Shape>& shapes) {
  std::string text;
  for (const Shape& s : shapes) absl::StrAppend(&text, " ", shape_str(s));
  throw ChunkError(absl::StrCat("operands could not be broadcast together with shapes", text));
}

}  // namespace

Shape broadcast_shapes(const std::vector<Shape>& shapes) {
  size_t nd = 0;
  for (const Shape& s : shapes) nd = std::max(nd, s.size());
  Shape out(nd, 1);
  for (const Shape& s : shapes) {
    for (size_t k = 0; k < s.size(); ++k) {
      int64_t& o = out[nd - s.size() + k];
      const int64_t e = s[k];
      if (e == o || e == 1) continue;
      if (o != 1) not_broadcastable(shapes);
      o = e;
    }
  }
  return out;
}

NDArray broadcast_block(const NDArray& block, const Shape& shape) {
  if (block.shape() == shape) return block;
  const size_t nd = shape.size(), lead = nd - std::min(nd, block.ndim());
  if (block.ndim() > nd) not_broadcastable({block.shape(), shape});
  Strides strides(nd, 0);
  for (size_t k = 0; k < block.ndim(); ++k) {
    const int64_t e = block.shape()[k];
    if (e == shape[lead + k]) {
      strides[lead + k] = block.strides()[k];
    } else if (e != 1) {
      not_broadcastable({block.shape(), shape});
    }
  }
  return NDArray(block.buffer(), block.dtype(), shape, std::move(strides), block.offset());
}

std::vector<Array> unify_chunks(const std::vector<Array>& arrays) {
  std::vector<Shape> shapes;
  for (const Array& a : arrays) shapes.push_back(a.shape());
  const Shape shape = broadcast_shapes(shapes);
  const size_t nd = shape.size();
  std::vector<Array> out;
  for (Array a : arrays) {
    while (a.ndim() < nd) a = expand_dims(a, 0);
    out.push_back(std::move(a));
  }
  for (size_t k = 0; k < nd; ++k) {
    std::vector<const std::vector<int64_t>*> lists;
    for (const Array& a : out) {
      if (a.shape()[k] == shape[k]) lists.push_back(&a.chunks()[k]);
    }
    const std::vector<int64_t> common = detail::common_refinement(lists);
    for (Array& a : out) {
      if (a.shape()[k] == shape[k] && a.chunks()[k] != common) {
        a = rechunk(a, std::map<size_t, AxisChunks>{{k, AxisChunks(common)}});
      }
    }
  }
  return out;
}

Array broadcast_to(const Array& x, const Shape& shape) {
  if (broadcast_shapes({x.shape(), shape}) != shape) not_broadcastable({x.shape(), shape});
  if (x.shape() == shape) return x;
  const size_t nd = shape.size(), lead = nd - x.ndim();
  std::vector<std::vector<int64_t>> sizes;
  for (size_t k = 0; k < nd; ++k) {
    const bool kept = k >= lead && x.shape()[k - lead] == shape[k];
    sizes.push_back(kept ? x.chunks()[k - lead] : std::vector<int64_t>{shape[k]});
  }
  const Chunks chunks(std::move(sizes));
  const std::string out = absl::StrCat("broadcast_to-", token({"broadcast_to", x.name(), shape_str(shape)}));
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> in;
    for (size_t k = lead; k < nd; ++k) in.push_back(x.shape()[k - lead] == shape[k] ? idx[k] : 0);
    Shape block_shape = chunks.block_shape(std::vector<int64_t>(idx.begin(), idx.end()));
    auto f = [block_shape](const NDArray& b) { return broadcast_block(b, block_shape); };
    layer.put(Key(out, idx), Task(fn("broadcast_to", f), ref(x.block_key(in))));
  });
  return Array(out, chunks, x.dtype(), std::move(layer), {x});
}

Array blockwise_broadcast(const std::string& name, const std::string& params, const std::vector<Array>& inputs,
                          DType dtype, BroadcastFunction f) {
  std::vector<Array> u;
  try {
    u = unify_chunks(inputs);
  } catch (const ChunkError& e) {
    throw ChunkError(absl::StrCat(name, ": ", e.what()));
  }
  std::vector<Shape> shapes;
  std::string tok = absl::StrCat(name, "/", params);
  for (const Array& a : u) {
    shapes.push_back(a.shape());
    absl::StrAppend(&tok, "/", a.name());
  }
  const Shape shape = broadcast_shapes(shapes);
  // Along each axis the output is cut as an operand that spans it; an operand
  // of extent 1 there gives its one block to every output block.
  std::vector<std::vector<int64_t>> sizes;
  for (size_t k = 0; k < shape.size(); ++k) {
    std::vector<int64_t> axis{shape[k]};
    for (const Array& a : u) {
      if (a.shape()[k] == shape[k]) axis = a.chunks()[k];
    }
    sizes.push_back(std::move(axis));
  }
  const Chunks chunks(std::move(sizes));
  const std::string out = absl::StrCat(name, "-", token({tok}));
  auto shared = std::make_shared<const BroadcastFunction>(std::move(f));
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    const Shape block_shape = chunks.block_shape(std::vector<int64_t>(idx.begin(), idx.end()));
    ArgList args;
    for (const Array& a : u) {
      std::vector<int64_t> in(idx.begin(), idx.end());
      for (size_t k = 0; k < in.size(); ++k) {
        if (a.shape()[k] != shape[k]) in[k] = 0;
      }
      args.items.emplace_back(ref(a.block_key(in)));
    }
    auto task = [shared, block_shape, name](const ValueList& blocks) {
      std::vector<NDArray> views;
      views.reserve(blocks.size());
      for (const Value& v : blocks) views.push_back(broadcast_block(block_value(v, name), block_shape));
      return (*shared)(views);
    };
    layer.put(Key(out, idx), Task(fn(name, std::move(task)), std::move(args)));
  });
  return Array(out, chunks, dtype, std::move(layer), u);
}

}  // namespace tessera::array
