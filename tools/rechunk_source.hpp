// tools/rechunk_source.hpp — what `tessera rechunk` reads, and the check that
// its task graph fits --max-mem.
//
// A task costs about a kilobyte of memory however small its block, so a store
// of 2^20 one-byte chunks read one task per chunk needs a gigabyte of graph to
// move one megabyte. The source is therefore read in blocks of many small
// chunks each (whole chunks, C-order neighbours first), each block read by one
// task; and a rechunk whose graph would still pass the part of --max-mem left
// for it (rechunk_graph_budget) is refused before anything is built, naming
// the chunk count that makes it so.
#pragma once

#include <cstdint>
#include <string>

#include "tessera/array/array.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"

namespace tessera::tool {

//! What `tessera rechunk` may hold: bytes per block, bytes of graph, workers.
struct SourceLimits {
  int64_t max_mem = 0;       //!< --max-mem, for messages
  int64_t block_limit = 0;   //!< bytes a block may have
  int64_t graph_budget = 0;  //!< bytes the task graph may have (rechunk_graph_budget)
  long workers = 1;
};

//! The array to rechunk and the chunks it is stored in (what `keep` keeps).
struct Source {
  array::Array array;
  array::Chunks stored;
};

//! The .npy file or zarr store `src`, in blocks under `limits.block_limit`: a
//! .npy file in runs of whole rows, a zarr store in blocks of its chunks,
//! grouped while they are small (see the file comment). Throws InputError for
//! an unreadable source; UsageError naming --max-mem and the chunk count when
//! the reading tasks alone pass the graph budget, or a shard's index passes
//! the block limit (the index is held, 16 bytes per inner chunk, while a shard
//! is read).
Source open_source(const std::string& src, const SourceLimits& limits);

//! UsageError naming --max-mem and the chunk counts unless the graph of reading
//! `from`, rechunking to `to` and storing fits `limits.graph_budget`.
void check_graph(const array::Chunks& from, const array::Chunks& to, const SourceLimits& limits);

}  // namespace tessera::tool
