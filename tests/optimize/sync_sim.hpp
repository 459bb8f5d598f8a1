// A model of get_sync's bookkeeping (dask.local.get_async with one worker), for
// tuning order() until the real scheduler is on main: a LIFO ready stack; the
// tasks one completion makes ready are pushed so the best priority pops first
// (the initial ready tasks too); a result is dropped when its last dependent has
// run unless requested; literals are data from the start and are not counted.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"

namespace tessera::testing {

struct SyncHeld {
  uint32_t max_held = 0;
  uint64_t max_held_bytes = 0;
};

inline SyncHeld simulate_sync(const Graph& g, const CompiledGraph& c, const std::vector<uint32_t>& prio,
                              const std::vector<Key>& outputs, const std::vector<uint64_t>& nbytes) {
  const uint32_t n = c.size();
  std::vector<uint32_t> waiting(n, 0), waiting_data(n, 0);
  std::vector<uint8_t> requested(n, 0), is_literal(n, 0);
  for (const Key& k : outputs) requested[*g.index_of(k)] = 1;
  std::vector<uint32_t> ready;
  for (uint32_t i = 0; i < n; ++i) {
    is_literal[i] = g.node(i).is_literal();
    waiting_data[i] = static_cast<uint32_t>(c.dependents(i).size());
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (is_literal[i]) continue;
    for (uint32_t d : c.dependencies(i)) waiting[i] += !is_literal[d];
    if (waiting[i] == 0) ready.push_back(i);
  }
  auto worst_last = [&](std::vector<uint32_t>& v, size_t from) {
    std::sort(v.begin() + static_cast<long>(from), v.end(),
              [&](uint32_t a, uint32_t b) { return prio[a] > prio[b]; });
  };
  worst_last(ready, 0);
  SyncHeld out;
  uint32_t held = 0;
  uint64_t bytes = 0;
  while (!ready.empty()) {
    const uint32_t t = ready.back();
    ready.pop_back();
    ++held;
    bytes += nbytes[t];
    const size_t from = ready.size();
    for (uint32_t d : c.dependents(t)) {
      if (--waiting[d] == 0) ready.push_back(d);
    }
    worst_last(ready, from);
    for (uint32_t d : c.dependencies(t)) {
      if (--waiting_data[d] == 0 && !requested[d] && !is_literal[d]) {
        --held;
        bytes -= nbytes[d];
      }
    }
    out.max_held = std::max(out.max_held, held);
    out.max_held_bytes = std::max(out.max_held_bytes, bytes);
  }
  return out;
}

}  // namespace tessera::testing
