// Private: rechunk_store across the ranks of a communicator (exchange.cpp).
#pragma once

#include <string>

#include "tessera/array/rechunk/rechunk.hpp"

namespace tessera::array::detail {

//! rechunk_store with options.communicator set; `target` is resolved already.
RechunkStoreResult rechunk_store_across(const Array& x, const Chunks& target, const std::string& path,
                                        const RechunkStoreOptions& options);

}  // namespace tessera::array::detail
