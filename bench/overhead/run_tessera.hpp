// bench/overhead/run_tessera.hpp — tessera's `get` on a DagShape, run only and end to end.
#pragma once

#include <cstdint>
#include <vector>

#include "dags.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::bench {

class TesseraRunner {
 public:
  //! Builds the graph of `shape` and its Plan (cull + order) once, for run().
  TesseraRunner(const DagShape& shape, int workers);
  //! `get` on the Plan built by the constructor, with GetOptions::memory_limit
  //! `memory_limit` (0: none); returns the seconds it took.
  double run(size_t memory_limit = 0);
  //! Build the Graph + Plan (cull + order) + `get`, from the shape; returns the seconds it took.
  double end_to_end();
  //! Seconds of the last end_to_end() spent building the Graph, and the Plan.
  double build_seconds() const { return build_s_; }
  double plan_seconds() const { return plan_s_; }
  //! The same in CPU seconds of the process, and the CPU seconds of the whole
  //! end_to_end() (both workers): on a shared machine, wall time is stretched
  //! by other load and CPU time is not.
  double build_cpu_seconds() const { return build_cpu_s_; }
  double plan_cpu_seconds() const { return plan_cpu_s_; }
  double end_to_end_cpu_seconds() const { return e2e_cpu_s_; }
  //! CPU seconds of the process during the last run() (with one worker, the
  //! caller's thread alone: what other load on the machine stretches least).
  double run_cpu_seconds() const { return run_cpu_s_; }
  //! The sum of the outputs of the last run (the dask peer must agree).
  int64_t checksum() const { return checksum_; }

 private:
  const DagShape& shape_;
  int workers_;
  Graph graph_;
  std::vector<Key> outputs_;
  Plan plan_;
  int64_t checksum_ = 0;
  double build_s_ = 0, plan_s_ = 0;
  double build_cpu_s_ = 0, plan_cpu_s_ = 0, e2e_cpu_s_ = 0, run_cpu_s_ = 0;
};

}  // namespace tessera::bench
