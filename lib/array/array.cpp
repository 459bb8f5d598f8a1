#include "tessera/array/array.hpp"

#include <algorithm>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"
#include "tessera/scheduler/get.hpp"
#include "array/block.hpp"
#include "array/ops/store.hpp"

namespace tessera::array {
namespace {

// The only element of a one-element array.
Scalar element_scalar(const NDArray& a) {
  const NDArray c = c_contiguous(a);
  return dispatch(a.dtype(), [&]<class T>() { return Scalar(*reinterpret_cast<const T*>(c.data())); });
}

// Records the key names `layer` defines. A layer's names are few (one per
// operation, a few for a rechunk step); two layers that define one key are
// the same work (names are tokens of inputs and parameters), so the order in
// which layers are tried does not matter.
void add_names(const Layer& layer,
               absl::flat_hash_map<std::string_view, absl::InlinedVector<const Layer*, 1>>& layers_of_name) {
  std::string_view last;
  for (uint32_t i = 0; i < layer.graph.size(); ++i) {
    const std::string_view name = layer.graph.key(i).name();
    if (name == last && !last.empty()) continue;  // keys of one name are usually adjacent
    last = name;
    auto& layers = layers_of_name[name];
    if (std::find(layers.begin(), layers.end(), &layer) == layers.end()) layers.push_back(&layer);
  }
}

}  // namespace

std::vector<Slice> block_region(const Chunks& chunks, std::span<const int64_t> index) {
  const std::vector<int64_t> block(index.begin(), index.end());
  const Shape offset = chunks.block_offset(block), shape = chunks.block_shape(block);
  std::vector<Slice> region;
  for (size_t k = 0; k < block.size(); ++k) region.push_back(Slice{offset[k], offset[k] + shape[k], 1});
  return region;
}

const NDArray& block_value(const Value& v, const std::string& what) {
  if (!v.is<NDArray>()) {
    throw TypeError(absl::StrCat(what, ": expected an NDArray block, found a value of type ",
                                 v.type_name()));
  }
  return v.as<NDArray>();
}

void check_block(const NDArray& block, const Shape& shape, DType dtype, const Key& key,
                 const std::string& function) {
  if (block.shape() != shape || block.dtype() != dtype) {
    throw ChunkError(absl::StrCat(function, " made block ", key.str(), " as a ", block.describe(),
                                  ", expected a ", std::string(dtype.name()), " array of shape ", shape_str(shape)));
  }
}

Array::Array(std::string name, Chunks chunks, DType dtype, Graph layer, std::vector<Array> inputs)
    : Array(std::move(chunks), dtype, Layer{std::move(name), std::move(layer), {}}, std::move(inputs)) {}

struct Array::State {
  std::string name;
  Chunks chunks;
  DType dtype;
  std::vector<std::shared_ptr<const Layer>> layers;
  //! For each key name, the layers (of `layers`) that define keys of that
  //! name: graph() finds a key's node without scanning every layer.
  absl::flat_hash_map<std::string_view, absl::InlinedVector<const Layer*, 1>> layers_of_name;
};

const std::string& Array::name() const { return state_->name; }
const Chunks& Array::chunks() const { return state_->chunks; }
DType Array::dtype() const { return state_->dtype; }
const std::vector<std::shared_ptr<const Layer>>& Array::layers() const { return state_->layers; }

Array::Array(std::string name, Chunks chunks, DType dtype, Graph layer, BlockFill fill)
    : Array(std::move(chunks), dtype, Layer{std::move(name), std::move(layer), std::move(fill)}, {}) {}

Array::Array(Chunks chunks, DType dtype, Layer layer, std::vector<Array> inputs) {
  const std::string& name = layer.name;
  auto state = std::make_shared<State>();
  // Inputs' layers first, each once (layers are shared by pointer; equal names
  // mean equal content, since names are tokens of the inputs and parameters).
  absl::flat_hash_set<std::string_view> seen;
  for (const Array& in : inputs) {
    for (const auto& l : in.layers()) {
      if (seen.insert(l->name).second) state->layers.push_back(l);
    }
  }
  for_each_block(chunks, [&](std::span<const int64_t> index) {
    Key k(name, index);
    if (!layer.graph.contains(k)) {
      throw ChunkError(absl::StrCat("array '", name, "' with chunks ", chunks.str(),
                                    ": its layer has no task for block ", k.str()));
    }
  });
  // The inputs' name maps, for the layers kept (of two equal layers, one is).
  absl::flat_hash_set<const Layer*> kept;
  for (const auto& l : state->layers) kept.insert(l.get());
  for (const Array& in : inputs) {
    for (const auto& [n, defined_by] : in.state_->layers_of_name) {
      for (const Layer* l : defined_by) {
        if (!kept.contains(l)) continue;
        auto& layers = state->layers_of_name[n];
        if (std::find(layers.begin(), layers.end(), l) == layers.end()) layers.push_back(l);
      }
    }
  }
  state->name = name;
  if (!seen.contains(name)) {
    state->layers.push_back(std::make_shared<const Layer>(std::move(layer)));
    add_names(*state->layers.back(), state->layers_of_name);
  }
  state->chunks = std::move(chunks);
  state->dtype = dtype;
  state_ = std::move(state);
}

int64_t Array::size() const {
  int64_t n = 1;
  for (int64_t s : shape()) n *= s;
  return n;
}

std::vector<Key> Array::keys() const {
  std::vector<Key> out;
  out.reserve(static_cast<size_t>(chunks().total_blocks()));
  for_each_block(chunks(), [&](std::span<const int64_t> index) { out.push_back(block_key(index)); });
  return out;
}

Graph Array::graph() const {
  const auto& layers = state_->layers;
  // Which layer defines each needed key, found by walking back from the blocks.
  absl::flat_hash_set<Key> needed;
  std::vector<Key> stack = keys();
  auto find = [&](const Key& k) -> const Node* {
    auto it = state_->layers_of_name.find(k.name());
    if (it == state_->layers_of_name.end()) return nullptr;
    for (const Layer* l : it->second) {
      if (const Node* n = l->graph.find(k)) return n;
    }
    return nullptr;
  };
  while (!stack.empty()) {
    Key k = std::move(stack.back());
    stack.pop_back();
    if (!needed.insert(k).second) continue;
    const Node* n = find(k);
    if (n == nullptr) continue;  // compile() reports it, naming the referrer
    if (n->is_task()) {
      for (const Key& d : n->task().dependencies()) stack.push_back(d);
    } else if (n->is_alias()) {
      stack.push_back(n->target());
    }
  }
  // Emit in layer order, so dependencies come before dependents.
  Graph g;
  g.reserve(needed.size());
  for (const auto& l : layers) {
    const Graph& lg = l->graph;
    for (uint32_t i = 0; i < lg.size(); ++i) {
      if (needed.contains(lg.key(i)) && !g.contains(lg.key(i))) g.set(lg.key(i), lg.node(i));
    }
  }
  return g;
}

namespace {

// compute() across ranks (options.communicator): the blocks come to rank 0 (to
// every rank with result_on_every_rank) as get's result, and are copied into
// place there; store_into's tasks would write each rank's blocks into that
// rank's own buffer.
NDArray compute_across(const Array& x, const ComputeOptions& options) {
  const std::vector<Key> keys = x.keys();
  const Result r = tessera::get(x.graph(), Keys(keys), options);
  if (!r[0].value().has_value()) return NDArray();  // a rank the result does not go to
  NDArray out = NDArray::empty(x.dtype(), x.shape());
  for (size_t k = 0; k < keys.size(); ++k) {
    const std::vector<int64_t> block(keys[k].index().begin(), keys[k].index().end());
    const Shape offset = x.chunks().block_offset(block), extent = x.chunks().block_shape(block);
    const NDArray& b = block_value(r[k].value(), "compute");
    check_block(b, extent, x.dtype(), keys[k], "compute");
    std::vector<Slice> where;
    for (size_t a = 0; a < offset.size(); ++a) where.emplace_back(offset[a], offset[a] + extent[a]);
    out.slice(where).assign(b);
  }
  return out;
}

}  // namespace

NDArray Array::compute(const ComputeOptions& options) const {
  if (options.communicator) return compute_across(*this, options);
  if (chunks().total_blocks() == 1) {
    // The block itself, unless it is a view that is not C-contiguous.
    const Key k = keys().front();
    const Result r = tessera::get(graph(), Keys(k), options);
    const NDArray& b = block_value(r.value(), "compute");
    check_block(b, shape(), dtype(), k, "compute");
    return c_contiguous(b);
  }
  NDArray out = NDArray::empty(dtype(), shape());
  store_into(*this, out, "compute-" + unique_token(), options);
  return out;
}

Scalar Array::compute_scalar(const ComputeOptions& options) const {
  if (size() != 1) {
    throw TypeError(absl::StrCat("compute<T>() needs an array of one element, but '", name(),
                                 "' has shape ", shape_str(shape()), " (", size(), " elements)"));
  }
  return element_scalar(compute(options));
}

}  // namespace tessera::array
