// tessera/tessera.hpp — everything in one include.
//
// tessera runs dask-style task graphs on one machine: the graph model
// (tessera/graph), graph algorithms (tessera/optimize), the schedulers
// (tessera/scheduler), one graph across ranks (tessera/across), their
// diagnostics (tessera/diagnostics), chunked arrays over Eigen tensors and
// memory-mapped files (tessera/array), an SPMD broadcast view (tessera/spmd),
// and lazy function calls whose keys tessera makes (tessera/delayed).
// Include the module headers instead to compile less.
//
// @code
//   #include <tessera/tessera.hpp>
//   tessera::Graph g;
//   g.put("x", 1);
//   g.task("y", [](int x) { return x + 1; }, tessera::ref("x"));
//   int y = tessera::get(g, "y").as<int>();   // 2
// @endcode
#pragma once

#include "tessera/comm/communicator.hpp"
#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/key_split.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/graph/token.hpp"
#include "tessera/graph/value.hpp"

#include "tessera/optimize/fuse.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"

#include "tessera/scheduler/callbacks.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"

#include "tessera/across/get.hpp"
#include "tessera/across/placement.hpp"

#include "tessera/diagnostics/profiler.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/report.hpp"
#include "tessera/diagnostics/resource_profiler.hpp"

#include "tessera/array/array.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/ops/broadcast.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/isa.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/array/ops/logic.hpp"
#include "tessera/array/ops/map_blocks.hpp"
#include "tessera/array/ops/overlap.hpp"
#include "tessera/array/io/mapped_file.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/array/rechunk/plan.hpp"
#include "tessera/array/rechunk/exchange.hpp"
#include "tessera/array/rechunk/rechunk_path.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/scan.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/ops/slicing.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/io/zarr.hpp"

#include "tessera/spmd/spmd.hpp"

#include "tessera/array/delayed.hpp"
#include "tessera/delayed/delayed.hpp"
