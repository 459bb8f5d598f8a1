// What every Communicator's point-to-point calls check before sending.
#pragma once

#include "tessera/comm/communicator.hpp"

namespace tessera::detail {

//! Throws ValueError when `dest` is not a rank of `comm` or `tag` is outside [0, Communicator::kMaxTag].
void check_send(const Communicator& comm, int dest, int tag);

}  // namespace tessera::detail
