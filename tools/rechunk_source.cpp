// tools/rechunk_source.cpp — the library's source and budget checks, with the command's errors.
#include "rechunk_source.hpp"

#include <new>
#include <string>

#include "command.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::tool {

namespace ta = tessera::array;

ta::RechunkLimits command_limits(int64_t max_mem, long workers) {
  return ta::rechunk_limits(max_mem, static_cast<int>(workers),
                            {.max_mem = "--max-mem", .chunks = "--chunks", .shard = "--shard", .workers = "--workers"});
}

ta::RechunkSource open_source(const std::string& src, const ta::RechunkLimits& limits) {
  try {
    return ta::open_rechunk_source(src, limits);
  } catch (const BudgetError& e) {
    throw UsageError(e.what());
  } catch (const Error& e) {
    // Every error tessera throws (a StorageError, a bad codec or .npy header)
    // names the source and what is wrong with it.
    throw InputError(src, e.what());
  }
}

void check_max_mem(const ta::Chunks& target, const ta::Shape& inner, const ta::DType& dtype,
                   const ta::RechunkLimits& limits) {
  try {
    ta::check_rechunk_memory(target, inner, dtype, limits);
  } catch (const BudgetError& e) {
    throw UsageError(e.what());
  }
}

void check_graph(const ta::Chunks& from, const ta::Chunks& to, const ta::RechunkLimits& limits) {
  try {
    ta::check_rechunk_graph(from, to, limits);
  } catch (const BudgetError& e) {
    throw UsageError(e.what());
  }
}

}  // namespace tessera::tool
