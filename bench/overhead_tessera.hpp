// bench/overhead_tessera.hpp — tessera's `get` on a DagShape, run only and end to end.
#pragma once

#include <cstdint>
#include <vector>

#include "overhead_dags.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"

namespace tessera::bench {

class TesseraRunner {
 public:
  //! Builds the graph of `shape` once, for run().
  TesseraRunner(const DagShape& shape, int workers);
  //! `get` on the graph built by the constructor; returns the seconds it took.
  double run();
  //! Build + cull + order + `get`, from the shape; returns the seconds it took.
  double end_to_end();
  //! The sum of the outputs of the last run (the dask peer must agree).
  int64_t checksum() const { return checksum_; }

 private:
  const DagShape& shape_;
  int workers_;
  Graph graph_;
  std::vector<Key> outputs_;
  int64_t checksum_ = 0;
};

}  // namespace tessera::bench
