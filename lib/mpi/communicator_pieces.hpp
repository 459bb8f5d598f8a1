// For tests: a world communicator whose point-to-point messages split into
// pieces of a few bytes, so that the path of messages past 2^31 bytes runs on
// small ones.
#pragma once

#include <cstdint>
#include <memory>

#include "tessera/comm/communicator.hpp"

namespace tessera::mpi::detail {

//! world_communicator(), with send() splitting messages into pieces of at most
//! `piece_bytes` (clamped to [1, 2^30]) instead of 2^30. Collective.
std::shared_ptr<Communicator> world_communicator_in_pieces(int64_t piece_bytes);

}  // namespace tessera::mpi::detail
