// Private: an Array's block as the tasks that receive and make it see it.
#pragma once

#include <string>
#include <vector>

#include <span>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"

namespace tessera::array {

//! The NDArray held by a block's value; TypeError naming `what` otherwise.
const NDArray& block_value(const Value& v, const std::string& what);

//! The region of block `index` of `chunks`, as slices of the whole array.
std::vector<Slice> block_region(const Chunks& chunks, std::span<const int64_t> index);

//! ChunkError unless `block` has `shape` and `dtype`; names `key` and `function`.
void check_block(const NDArray& block, const Shape& shape, DType dtype, const Key& key,
                 const std::string& function);

}  // namespace tessera::array
