// Where get and get_sync hand over a run whose GetOptions name a communicator.
//
// The scheduler runs one process's graph and knows nothing of ranks; the run
// across ranks (lib/across, tessera/across/get.hpp) is built on top of it and
// reaches it only through the public seam: an Inbox for the results that
// arrive from other ranks and leave for them (Inbox::set_returned, Inbox::sent)
// and a posttask hook. This is the one way back up: lib/across registers its
// runner here when the library loads, so that callers that still set
// GetOptions::communicator and call tessera::get keep working while they move
// to across::get; the scheduler includes nothing of lib/across.
#pragma once

#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::detail {

//! The run across ranks, by the form get was called with; `sync` picks
//! get_sync's single thread for the local run.
struct AcrossRunner {
  Result (*plan)(const Plan& plan, const GetOptions& options, bool sync) = nullptr;
  Result (*graph)(const Graph& g, const Keys& keys, const GetOptions& options, bool sync) = nullptr;
};

//! Installs `runner` (lib/across does, at static initialization).
void set_across_runner(AcrossRunner runner);
//! The installed runner; throws tessera::Error when none is (a program linked
//! without lib/across).
const AcrossRunner& across_runner();

}  // namespace tessera::detail
