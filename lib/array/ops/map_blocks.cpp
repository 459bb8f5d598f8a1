#include "tessera/array/ops/map_blocks.hpp"

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace detail {

void check_kernel_inputs(const std::vector<Array>& inputs, DType t, int rank) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    const Array& a = inputs[i];
    if (a.dtype() != t || static_cast<int>(a.ndim()) != rank) {
      throw TypeError(absl::StrCat("map_blocks: the kernel takes ", std::string(t.name()), " maps of rank ", rank,
                                   ", but input ", i, " ('", a.name(), "') is ", std::string(a.dtype().name()),
                                   " of rank ", a.ndim()));
    }
  }
}

}  // namespace detail

Array map_blocks(BlockFunction f, const std::vector<Array>& inputs, DType dtype, const MapBlocksOptions& options) {
  if (inputs.empty()) throw Error("map_blocks needs at least one input array");
  const Array& first = inputs.front();
  for (size_t i = 1; i < inputs.size(); ++i) {
    if (inputs[i].numblocks() != first.numblocks()) {
      throw ChunkError(absl::StrCat("map_blocks: input ", i, " ('", inputs[i].name(), "') has chunks ",
                                    inputs[i].chunks().str(), ", whose blocks do not match input 0's ",
                                    first.chunks().str()));
    }
  }
  const Chunks chunks = options.chunks.value_or(first.chunks());
  if (chunks.numblocks() != first.numblocks()) {
    throw ChunkError(absl::StrCat("map_blocks: the output chunks ", chunks.str(),
                                  " have another block grid than the inputs' ", first.chunks().str()));
  }
  // A kernel is opaque: its output gets a token of its own.
  const std::string out = absl::StrCat(options.name, "-", unique_token());
  auto shared = std::make_shared<const BlockFunction>(std::move(f));
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    Key key(out, idx);
    Shape shape = chunks.block_shape(std::vector<int64_t>(idx.begin(), idx.end()));
    auto task = [shared, shape, dtype, key, name = options.name](const ValueList& blocks) {
      std::vector<NDArray> in;
      in.reserve(blocks.size());
      for (const Value& v : blocks) in.push_back(block_value(v, name));
      NDArray r = (*shared)(in);
      check_block(r, shape, dtype, key, name);
      return r;
    };
    ArgList args;
    for (const Array& a : inputs) args.items.emplace_back(ref(a.block_key(idx)));
    layer.put(key, Task(fn(options.name, std::move(task)), std::move(args)));
  });
  return Array(out, chunks, dtype, std::move(layer), inputs);
}

}  // namespace tessera::array
