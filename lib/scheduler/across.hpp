// A run spread over the ranks of a Communicator (GetOptions::communicator).
#pragma once

#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::detail {

//! Runs this rank's part of `plan` (place()), with get_sync's single thread
//! when `sync`, else get's workers, while a thread of its own moves results
//! between the ranks of options.communicator. Every rank calls it with the same
//! plan; get.cpp's entry points come here when a communicator is set.
Result get_across(const Plan& plan, const GetOptions& options, bool sync);

}  // namespace tessera::detail
