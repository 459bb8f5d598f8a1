// Blocks by their position in their array's grid, other tasks by runs of
// order, then tasks whose inputs are on one rank follow them: placement.hpp
// says why. The first two rules split a sorted list into `ranks` contiguous
// runs of equal length, which is the one helper here.
#include "tessera/across/placement.hpp"

#include <algorithm>
#include <cstdint>
#include <deque>

#include <absl/container/flat_hash_map.h>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera {
namespace {

// Element k of `tasks` (sorted) goes to rank k * ranks / size.
void split_in_runs(std::span<const uint32_t> tasks, int ranks, std::vector<int>& owner) {
  const auto n = static_cast<uint64_t>(tasks.size());
  for (uint64_t k = 0; k < n; ++k) owner[tasks[k]] = static_cast<int>(k * static_cast<uint64_t>(ranks) / n);
}

// Blocks sorted by name, then index: each name's blocks in contiguous runs.
// Numbers each block's name in `grid` (grids[t], from 1; 0 for other tasks)
// when given.
void split_grids(const Plan& plan, std::span<const uint32_t> blocks, int ranks, std::vector<int>& owner,
                 std::vector<uint32_t>* grids = nullptr, std::vector<uint32_t>* grid_sizes = nullptr) {
  for (size_t i = 0; i < blocks.size();) {
    size_t j = i + 1;
    while (j < blocks.size() && plan.key(blocks[j]).name() == plan.key(blocks[i]).name()) ++j;
    split_in_runs(blocks.subspan(i, j - i), ranks, owner);
    if (grids != nullptr) {
      grid_sizes->push_back(static_cast<uint32_t>(j - i));
      for (size_t k = i; k < j; ++k) (*grids)[blocks[k]] = static_cast<uint32_t>(grid_sizes->size() - 1);
    }
    i = j;
  }
}

// Moves each task whose inputs that are tasks all sit on one rank, at least one
// of them a block, to that rank, dependencies first (Kahn's order, first come
// first served), so a chain of such tasks follows its first link. A task that
// reads a process-local result (kProcessLocal) goes to that result's rank
// instead, before anything else. No rank takes
// more than its share (n / ranks, rounded up) of a grid's n blocks this way: a
// block that many one-input blocks read (a broadcast) does not pull them all to
// its rank.
void follow_inputs(const Plan& plan, int ranks, std::span<const uint32_t> grids,
                   std::span<const uint32_t> grid_sizes, std::vector<int>& owner) {
  const uint32_t n = plan.num_tasks();
  std::vector<uint32_t> waiting(n);
  std::deque<uint32_t> ready;
  for (uint32_t t = 0; t < n; ++t) {
    waiting[t] = plan.num_waiting(t);
    if (waiting[t] == 0) ready.push_back(t);
  }
  absl::flat_hash_map<uint64_t, uint32_t> taken;  // (grid, rank) -> blocks that followed there
  std::vector<uint8_t> pinned(n, 0);  // 1: reads a process-local result, placed on its rank already
  while (!ready.empty()) {
    const uint32_t t = ready.front();
    ready.pop_front();
    int rank = -1;
    bool one_rank = true, reads_block = false;
    for (uint32_t d : plan.dependencies(t)) {
      if (d >= n) continue;
      one_rank = one_rank && (rank < 0 || owner[d] == rank);
      rank = owner[d];
      reads_block = reads_block || grids[d] != 0;
    }
    if (!pinned[t] && one_rank && reads_block) {
      if (grids[t] == 0) {
        owner[t] = rank;
      } else {
        const uint64_t share = (grid_sizes[grids[t]] + static_cast<uint64_t>(ranks) - 1) / static_cast<uint64_t>(ranks);
        uint32_t& count = taken[uint64_t{grids[t]} * static_cast<uint64_t>(ranks) + static_cast<uint64_t>(rank)];
        if (count < share) {
          ++count;
          owner[t] = rank;
        }
      }
    }
    const bool local = plan.task(t).function_name().starts_with(kProcessLocal);
    for (uint32_t r : plan.dependents(t)) {
      if (r >= n) continue;
      if (local) {
        owner[r] = owner[t];
        pinned[r] = 1;
      }
      if (--waiting[r] == 0) ready.push_back(r);
    }
  }
}

// Whether block task t reads a block of its own grid (a tree kept as one grid).
bool reads_own_grid(const Plan& plan, std::span<const uint32_t> grids, uint32_t t) {
  for (uint32_t d : plan.dependencies(t)) {
    if (d < plan.num_tasks() && grids[d] == grids[t]) return true;
  }
  return false;
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
  std::vector<uint32_t> grids(plan.num_tasks(), 0), grid_sizes{0};
  split_grids(plan, blocks, ranks, owner, &grids, &grid_sizes);
  std::sort(others.begin(), others.end(), [&](uint32_t a, uint32_t b) { return plan.priority(a) < plan.priority(b); });
  split_in_runs(others, ranks, owner);
  // A name whose blocks read blocks of the same name (a tree kept as one grid,
  // ("sum", level, j)) is spread again over the blocks that read none (the
  // leaves), else they would fill only the first ranks' runs; the others keep
  // their place in the whole grid unless they follow their inputs.
  std::vector<uint32_t> leaves;
  for (uint32_t t : blocks) {
    if (!reads_own_grid(plan, grids, t)) leaves.push_back(t);
  }
  if (leaves.size() < blocks.size()) split_grids(plan, leaves, ranks, owner);
  follow_inputs(plan, ranks, grids, grid_sizes, owner);
  return owner;
}

}  // namespace tessera
