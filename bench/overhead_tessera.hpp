// bench/overhead_tessera.hpp — tessera's `get` on a DagShape, run only and end to end.
#pragma once

#include <cstdint>
#include <vector>

#include "overhead_dags.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::bench {

class TesseraRunner {
 public:
  //! Builds the graph of `shape` and its Plan (cull + order) once, for run().
  //! `memory_limit`: GetOptions::memory_limit of every run (0: none).
  TesseraRunner(const DagShape& shape, int workers, size_t memory_limit = 0);
  //! `get` on the Plan built by the constructor; returns the seconds it took.
  double run();
  //! Build the Graph + Plan (cull + order) + `get`, from the shape; returns the seconds it took.
  double end_to_end();
  //! Seconds of the last end_to_end() spent building the Graph, and the Plan.
  double build_seconds() const { return build_s_; }
  double plan_seconds() const { return plan_s_; }
  //! The sum of the outputs of the last run (the dask peer must agree).
  int64_t checksum() const { return checksum_; }

 private:
  const DagShape& shape_;
  int workers_;
  size_t memory_limit_;
  Graph graph_;
  std::vector<Key> outputs_;
  Plan plan_;
  int64_t checksum_ = 0;
  double build_s_ = 0, plan_s_ = 0;
};

}  // namespace tessera::bench
