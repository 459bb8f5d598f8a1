// bench/overhead/run_flow_graph.hpp — the floor: oneTBB flow_graph running a DagShape
// with empty bodies (one continue_node per task, one edge per dependency).
#pragma once

#include <memory>

#include "dags.hpp"

namespace tessera::bench {

class FlowGraphRunner {
 public:
  //! Builds the flow graph of `shape` inside an arena of `threads` threads (a
  //! flow graph runs in the arena it was built in); not timed by run().
  FlowGraphRunner(const DagShape& shape, int threads);
  ~FlowGraphRunner();
  //! Runs every node once; returns the seconds it took.
  double run();

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera::bench
