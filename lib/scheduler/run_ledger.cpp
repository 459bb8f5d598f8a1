// The ledger's setting up and its end-of-run walks (run_ledger.hpp); what it
// does per task is inline in the header, for the loop.
#include "run_ledger.hpp"

namespace tessera::detail {

Ledger::Ledger(const Plan& plan) : plan_(plan) {
  const uint32_t m = plan.size(), nt = plan.num_tasks();
  waiting = std::make_unique<std::atomic<uint32_t>[]>(nt);
  uses = std::make_unique<std::atomic<uint32_t>[]>(m);
  values = std::make_unique<Value[]>(m);
  for (uint32_t u = 0; u < nt; ++u) waiting[u].store(plan.num_waiting(u), std::memory_order_relaxed);
  for (uint32_t u = 0; u < m; ++u) {
    uint32_t readers = static_cast<uint32_t>(plan.dependents(u).size());
    uses[u].store(readers + (plan.is_requested(u) ? 1 : 0), std::memory_order_relaxed);
  }
  for (uint32_t u = nt; u < m; ++u) values[u] = plan.known(u);
  stack.reserve(nt);
  stack = plan.initial_ready();
}

void Ledger::release_all() {
  for (uint32_t u = 0; u < plan_.size(); ++u) values[u] = Value();
}

Result Ledger::collect(const Keys& keys, size_t& next) const {
  if (keys.is_key()) return Result(values[plan_.requested()[next++]]);
  std::vector<Result> items;
  items.reserve(keys.items().size());
  for (const Keys& k : keys.items()) items.push_back(collect(k, next));
  return Result(std::move(items));
}

// The run stalled: every unfinished task still waits on an unfinished input, so
// walking from one to such an input must come back to a task already seen.
std::vector<Key> Ledger::find_cycle() const {
  const uint32_t nt = plan_.num_tasks();
  auto unfinished = [&](uint32_t u) { return u < nt && waiting[u].load(std::memory_order_relaxed) > 0; };
  std::vector<int64_t> seen_at(nt, -1);
  std::vector<uint32_t> path;
  uint32_t u = 0;
  while (!unfinished(u)) ++u;
  while (seen_at[u] < 0) {
    seen_at[u] = static_cast<int64_t>(path.size());
    path.push_back(u);
    for (uint32_t d : plan_.dependencies(u)) {
      if (unfinished(d)) {
        u = d;
        break;
      }
    }
  }
  std::vector<Key> cycle;
  for (size_t i = static_cast<size_t>(seen_at[u]); i < path.size(); ++i) cycle.push_back(plan_.key(path[i]));
  cycle.push_back(plan_.key(u));
  return cycle;
}

}  // namespace tessera::detail
