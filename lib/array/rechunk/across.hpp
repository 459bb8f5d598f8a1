// Private: rechunk_store across the ranks of a communicator (exchange.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tessera/array/rechunk/rechunk.hpp"

namespace tessera::array::detail {

//! C-order strides, in blocks, of a grid of `numblocks`: a block's flat index,
//! by which plan_exchange gives blocks their owners, is its dot product with them.
std::vector<int64_t> grid_strides(const std::vector<int64_t>& numblocks);

//! rechunk_store with options.communicator set; `target` is resolved already.
RechunkStoreResult rechunk_store_across(const Array& x, const Chunks& target, const std::string& path,
                                        const RechunkStoreOptions& options);

}  // namespace tessera::array::detail
