// tessera/spmd/spmd.hpp — the whole tessera::spmd module: Cluster, BroadcastView,
// AsyncResult, Reference, context() and its collectives, get_partition, flatten,
// CompositeError. See cluster.hpp for a first example.
#pragma once

#include "tessera/spmd/async_result.hpp"
#include "tessera/spmd/cluster.hpp"
#include "tessera/spmd/context.hpp"
#include "tessera/spmd/error.hpp"
#include "tessera/spmd/partition.hpp"
#include "tessera/spmd/view.hpp"
