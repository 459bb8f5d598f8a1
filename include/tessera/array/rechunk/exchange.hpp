// tessera/array/rechunk/exchange.hpp — the rechunk across ranks, planned: which
// rank reads which input blocks, which writes which output blocks, and the
// rounds of all-to-all exchanges between them under a per-rank memory limit.
//
// Ranks own blocks round-robin by their C-order (flat) index: input block i is
// read by rank i mod P, output block j assembled and written by rank j mod P.
// The output blocks go through the exchange in rounds. A round is a list of
// boxes of output blocks taken from the rechunk's partials (plan.hpp's
// `partials`, the groups the single-process shuffle makes one buffer each), a
// partial cut into tiles when it does not fit one round and neighbouring
// partials joined while they fit. In a round every rank cuts the shards the
// round's output blocks need out of its input blocks into one send buffer laid
// out by destination rank, one all-to-all-v moves them, and every rank
// assembles and writes its output blocks of the round. A rank's memory in a
// round is its send buffer, its receive buffer and, per worker, one input block
// (while packing) or one output block (while assembling):
//   peak = max(send + W x in_block, send + recv, recv + W x out_block).
// An input block that feeds several rounds is read again in each.
//
//   output blocks (rows -> columns, 4 ranks):   | 0 1 2 3 | 4 5 6 7 | ...   round 0 | round 1 | ...
//   rank q writes blocks q, q + 4, ...; every rank sends each of them the slices of its input rows.
//
// @code
//   namespace ta = tessera::array;
//   ta::ExchangePlan p = ta::plan_exchange({{256, 256}, {512}}, {{512}, {128, 128, 128, 128}}, 8,
//                                          {.ranks = 2, .max_mem = 1 << 20});
//   // p.rounds[k].boxes, p.rounds[k].max_peak, p.peak_memory
// @endcode
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <vector>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/rechunk/plan.hpp"

namespace tessera::array {

//! What an exchange is planned for.
struct ExchangeOptions {
  int ranks = 1;         //!< processes (>= 1)
  int64_t max_mem = 0;   //!< bytes each rank may hold in a round (>= 1)
  int workers = 1;       //!< threads per rank that pack and assemble blocks (>= 1)
};

//! Output blocks `[begin, end)` on each axis.
struct BlockBox {
  //! The first block index on each axis.
  std::vector<int64_t> begin;
  //! One past the last block index on each axis.
  std::vector<int64_t> end;
  //! Blocks in the box.
  int64_t count() const;
  //! Same box.
  friend bool operator==(const BlockBox&, const BlockBox&) = default;
};

//! One round of the exchange, with its figures (bytes; "per rank" figures are
//! the largest over the ranks).
struct ExchangeRound {
  std::vector<BlockBox> boxes;   //!< its output blocks, box by box, each in C order
  //! Output blocks the round writes.
  int64_t output_blocks = 0;
  int64_t bytes = 0;             //!< moved through the exchange (the round's output bytes)
  int senders = 0;               //!< ranks that own an input block the round reads
  int receivers = 0;             //!< ranks that own an output block of the round
  int64_t max_send = 0;          //!< per rank: send buffer
  int64_t max_recv = 0;          //!< per rank: receive buffer
  int64_t max_peak = 0;          //!< per rank: peak memory (see the file comment)
  //! Messages between distinct ranks: at most senders x receivers minus the
  //! ranks that are both (their part to themselves is a copy).
  int64_t max_messages() const;
};

//! The rounds of an exchange and the blocks' figures.
struct ExchangePlan {
  //! Ranks taking part.
  int ranks = 1;
  //! Blocks of the input and of the output.
  //! @{
  int64_t input_blocks = 0, output_blocks = 0;
  //! @}
  //! Bytes of the largest block of the input and of the output.
  //! @{
  int64_t input_block_bytes = 0, output_block_bytes = 0;  //!< the largest block of each
  //! @}
  int64_t total_bytes = 0;                                //!< the array's bytes
  //! The rounds, in the order they run.
  std::vector<ExchangeRound> rounds;
  int64_t peak_memory = 0;  //!< per rank, over every round
};

//! The part of a rank's memory limit the plan fills: seven eighths. The rest
//! is for what the plan does not count: the program and its libraries, the
//! scheduler's bookkeeping, the pages of input chunks mapped while read.
inline int64_t exchange_budget(int64_t max_mem) { return max_mem - max_mem / 8; }

//! The options rechunk_store plans its exchange under for a run whose
//! memory_limit is `memory_limit` (0: 1 GiB), on `ranks` ranks of `workers`
//! threads: exchange_budget of the limit.
inline ExchangeOptions exchange_options(size_t memory_limit, int ranks, int workers) {
  const int64_t limit = memory_limit > 0 ? static_cast<int64_t>(memory_limit) : int64_t{1} << 30;
  return {.ranks = ranks, .max_mem = exchange_budget(limit), .workers = workers};
}

//! Prints `plan` (from `from` to `to` chunks of `dtype`, planned under
//! `options`) as `tessera rechunk --dry-run` does: the blocks, one line per
//! round (up to `max_rounds`, then a count), and the totals: bytes each rank
//! sends and receives at most, and its peak memory.
//! @code
//!   tessera::array::print_exchange_plan(stdout, from, to, dtype, options, tessera::array::plan_exchange(...));
//! @endcode
void print_exchange_plan(std::FILE* out, const Chunks& from, const Chunks& to, DType dtype,
                         const ExchangeOptions& options, const ExchangePlan& plan, size_t max_rounds = 12);

//! The owner of the block with flat (C-order) index `flat` among `ranks` ranks.
inline int block_owner(int64_t flat, int ranks) { return static_cast<int>(flat % ranks); }

//! Plans the exchange from `old_chunks` to `new_chunks` of items of `itemsize`
//! bytes. Throws ChunkError for inconsistent chunkings, options out of range, and
//! when `max_mem` cannot hold a round of one output block (the message gives the
//! smallest max_mem that can).
ExchangePlan plan_exchange(const ChunkSizes& old_chunks, const ChunkSizes& new_chunks, int64_t itemsize,
                           const ExchangeOptions& options);

}  // namespace tessera::array
