// Blocks by their position in their array's grid, other tasks by runs of
// order: placement.hpp says why. Both rules split a sorted list into `ranks`
// contiguous runs of equal length, which is the one helper here.
#include "tessera/scheduler/placement.hpp"

#include <algorithm>
#include <cstdint>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera {
namespace {

// Element k of `tasks` (sorted) goes to rank k * ranks / size.
void split_in_runs(std::span<const uint32_t> tasks, int ranks, std::vector<int>& owner) {
  const auto n = static_cast<uint64_t>(tasks.size());
  for (uint64_t k = 0; k < n; ++k) owner[tasks[k]] = static_cast<int>(k * static_cast<uint64_t>(ranks) / n);
}

}  // namespace

std::vector<int> place(const Plan& plan, int ranks) {
  if (ranks < 1) throw ValueError(absl::StrCat("place: expected at least 1 rank, found ", ranks));
  std::vector<int> owner(plan.num_tasks(), 0);
  std::vector<uint32_t> blocks, others;
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) (plan.key(t).index().empty() ? others : blocks).push_back(t);

  std::sort(blocks.begin(), blocks.end(), [&](uint32_t a, uint32_t b) {
    const Key& ka = plan.key(a);
    const Key& kb = plan.key(b);
    if (ka.name() != kb.name()) return ka.name() < kb.name();
    const auto ia = ka.index(), ib = kb.index();
    return std::lexicographical_compare(ia.begin(), ia.end(), ib.begin(), ib.end());
  });
  for (size_t i = 0; i < blocks.size();) {
    size_t j = i + 1;
    while (j < blocks.size() && plan.key(blocks[j]).name() == plan.key(blocks[i]).name()) ++j;
    split_in_runs(std::span(blocks).subspan(i, j - i), ranks, owner);
    i = j;
  }

  std::sort(others.begin(), others.end(), [&](uint32_t a, uint32_t b) { return plan.priority(a) < plan.priority(b); });
  split_in_runs(others, ranks, owner);
  return owner;
}

}  // namespace tessera
