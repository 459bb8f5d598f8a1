// tools/rechunk_dry_run.hpp — `tessera rechunk --dry-run`: the plan of the
// rechunk across ranks, printed from the plan's own numbers, without MPI and
// without the data (exchange.hpp).
#pragma once

#include <cstdint>
#include <cstdio>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/rechunk/exchange.hpp"

namespace tessera::tool {

//! Prints the plan: the blocks, then one line per round (up to `max_rounds`
//! lines, then the rounds' totals), then per-rank peak memory.
void print_exchange_plan(std::FILE* out, const array::Chunks& from, const array::Chunks& to, array::DType dtype,
                         const array::ExchangeOptions& options, const array::ExchangePlan& plan,
                         size_t max_rounds = 12);

}  // namespace tessera::tool
