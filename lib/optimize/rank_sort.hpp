// Private: the ready stack's sort, shared by the schedulers' Plan and order()'s
// model of them. Ready tasks are pushed worst first, so that the best rank
// (the lowest priority number) is on top of the LIFO stack.
#pragma once

#include <algorithm>
#include <cstdint>
#include <vector>

#include <span>

namespace tessera::detail {

//! Sorts `ids` by descending `rank[id]`. Ranks are order() priorities, nearly
//! always distinct and below a bound near the number of ids: then one pass
//! over a table indexed by rank places every id, in linear time, where a
//! comparison sort of the 10^5 roots of a reduction cost more than running
//! them. Ranks that repeat, or that are sparse, go to std::sort (the result
//! is the same whenever ranks are distinct).
inline void sort_by_rank_descending(std::vector<uint32_t>& ids, std::span<const uint32_t> rank) {
  constexpr size_t kLinearFrom = 256;  // below, the table costs more than the sort
  auto worst_first = [&](uint32_t a, uint32_t b) { return rank[a] > rank[b]; };
  if (ids.size() < kLinearFrom) {
    std::sort(ids.begin(), ids.end(), worst_first);
    return;
  }
  uint32_t top = 0;
  for (uint32_t id : ids) top = std::max(top, rank[id]);
  if (size_t{top} >= 16 * ids.size()) {
    std::sort(ids.begin(), ids.end(), worst_first);
    return;
  }
  std::vector<uint32_t> at(size_t{top} + 1, UINT32_MAX);
  for (uint32_t id : ids) {
    uint32_t& slot = at[rank[id]];
    if (slot != UINT32_MAX) {  // a repeated rank: let the comparison sort order the ties
      std::sort(ids.begin(), ids.end(), worst_first);
      return;
    }
    slot = id;
  }
  size_t k = 0;
  for (size_t r = at.size(); r-- > 0;) {
    if (at[r] != UINT32_MAX) ids[k++] = at[r];
  }
}

}  // namespace tessera::detail
