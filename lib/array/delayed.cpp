// Arrays to and from lazy blocks: tessera/array/delayed.hpp.
#include "tessera/array/delayed.hpp"

#include <string>

#include <absl/strings/str_cat.h>

#include "tessera/array/core/grid.hpp"
#include "tessera/graph/error.hpp"

namespace tessera {

std::vector<Delayed<array::NDArray>> to_delayed(const array::Array& x) {
  // One fragment for all blocks: merging copies it once however many blocks are used.
  auto fragment = std::make_shared<const Graph>(x.graph());
  std::vector<Delayed<array::NDArray>> out;
  for (const Key& k : x.keys()) out.emplace_back(Lazy(k, fragment));
  return out;
}

namespace {

array::NDArray check_block(const array::NDArray& block, const array::Shape& shape,
                           const std::string& dtype) {
  if (block.shape() != shape || block.dtype().str() != dtype) {
    throw TypeError(absl::StrCat("from_delayed: expected a block of shape ", array::shape_str(shape),
                                 " and dtype ", dtype, ", found shape ",
                                 array::shape_str(block.shape()), " and dtype ",
                                 block.dtype().str()));
  }
  return block;
}

}  // namespace

array::Array from_delayed(const std::vector<Delayed<array::NDArray>>& blocks,
                          const array::Chunks& chunks, array::DType dtype) {
  const int64_t expected = chunks.total_blocks();
  if (static_cast<int64_t>(blocks.size()) != expected) {
    throw ChunkError(absl::StrCat("from_delayed: chunks ", chunks.str(), " need ", expected,
                                  " blocks, found ", blocks.size()));
  }
  std::vector<Lazy> lazies(blocks.begin(), blocks.end());
  std::string parts = absl::StrCat(chunks.str(), "|", dtype.str());
  for (const Lazy& b : lazies) absl::StrAppend(&parts, "|", b.key().str());
  const std::string name = "from-delayed-" + array::token({parts});
  Graph layer = merged_graph(lazies);
  size_t i = 0;
  array::for_each_block(chunks, [&](std::span<const int64_t> index) {
    array::Shape shape(index.size());
    for (size_t a = 0; a < index.size(); ++a) {
      shape[a] = chunks[a][static_cast<size_t>(index[a])];
    }
    layer.task(Key(name, index), fn("from_delayed", check_block), ref(blocks[i++].key()), shape,
               dtype.str());
  });
  return array::Array(name, chunks, dtype, std::move(layer));
}

array::Array from_delayed(const Delayed<array::NDArray>& block, const array::Shape& shape,
                          array::DType dtype) {
  std::vector<std::vector<int64_t>> sizes;
  for (int64_t s : shape) sizes.push_back({s});
  return from_delayed(std::vector<Delayed<array::NDArray>>{block}, array::Chunks(std::move(sizes)),
                      dtype);
}

}  // namespace tessera
