// tools/rechunk_source.hpp — what `tessera rechunk` reads, and its checks
// against --max-mem, as the command reports them.
//
// The reading and the checks are the library's (rechunk_path.hpp: a store of
// small chunks is read many chunks a task; blocks, a shard's index and the task
// graph are checked against --max-mem before anything is built), shared with
// Python's tessera.rechunk; here they name the command's options and their
// refusals become UsageErrors (exit status 2), an unreadable source an InputError.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/rechunk/rechunk_path.hpp"

namespace tessera::tool {

//! What `tessera rechunk` may hold under --max-mem with --workers, its
//! refusals naming --max-mem, --chunks, --shard and --workers.
array::RechunkLimits command_limits(int64_t max_mem, long workers);

//! The .npy file or zarr store `src` (array::open_rechunk_source). Throws
//! InputError for an unreadable source; UsageError naming --max-mem and the
//! chunk count when the reading tasks alone pass the graph budget, or a shard's
//! index passes the block limit.
array::RechunkSource open_source(const std::string& src, const array::RechunkLimits& limits);

//! UsageError naming --max-mem unless each worker can hold its blocks of
//! `target` (in shards of `inner` chunks when sharded): array::check_rechunk_memory.
void check_max_mem(const array::Chunks& target, const array::Shape& inner, const array::DType& dtype,
                   const array::RechunkLimits& limits);

//! UsageError naming --max-mem and the chunk counts unless the graph of reading
//! `from`, rechunking to `to` and storing fits the graph budget: array::check_rechunk_graph.
void check_graph(const array::Chunks& from, const array::Chunks& to, const array::RechunkLimits& limits);

}  // namespace tessera::tool
