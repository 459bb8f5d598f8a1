// Building a Plan: cull from the requested keys, resolve aliases, number the
// nodes densely (tasks first), order, and lay out CSR edges. All of it is linear
// in the nodes and edges the request needs, plus one compile() of the graph.
#include "tessera/scheduler/plan.hpp"

#include <algorithm>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/optimize/order.hpp"

namespace tessera {

class PlanBuilder {
 public:
  PlanBuilder(Plan& p, const Cache& cache) : p_(p), g_(*p.graph_), c_(compile(g_)) {
    const uint32_t n = c_.size();
    resolved_.assign(n, kUnseen);
    cached_.assign(n, kNone);
    for (const auto& [key, value] : cache) {
      if (auto id = g_.index_of(key)) {
        cached_[*id] = static_cast<uint32_t>(cache_values_.size());
        cache_values_.push_back(value);
      }
    }
  }

  void build() {
    cull();
    number();
    prioritize();
    link();
  }

 private:
  static constexpr uint32_t kUnseen = UINT32_MAX;
  static constexpr uint32_t kNone = UINT32_MAX;

  bool is_task(uint32_t gid) const { return cached_[gid] == kNone && g_.node(gid).is_task(); }
  bool is_alias(uint32_t gid) const { return cached_[gid] == kNone && g_.node(gid).is_alias(); }

  // The node an alias chain ends at; marks the chain as needed.
  uint32_t resolve(uint32_t gid) {
    std::vector<uint32_t> chain;
    uint32_t at = gid;
    while (is_alias(at) && resolved_[at] == kUnseen) {
      if (std::find(chain.begin(), chain.end(), at) != chain.end()) throw_alias_cycle(chain, at);
      chain.push_back(at);
      at = c_.dependencies(at)[0];
    }
    uint32_t target = is_alias(at) ? resolved_[at] : at;
    for (uint32_t a : chain) {
      resolved_[a] = target;
      needed_aliases_.push_back(a);
    }
    return target;
  }

  [[noreturn]] void throw_alias_cycle(const std::vector<uint32_t>& chain, uint32_t again) {
    std::vector<Key> cycle;
    auto from = std::find(chain.begin(), chain.end(), again);
    for (auto it = from; it != chain.end(); ++it) cycle.push_back(g_.key(*it));
    cycle.push_back(g_.key(again));
    throw CycleError(std::move(cycle));
  }

  // Depth-first from the requested keys; stops at literals and cached values.
  void cull() {
    std::vector<uint32_t> stack;
    auto visit = [&](uint32_t gid) {
      uint32_t t = resolve(gid);
      if (resolved_[t] == kUnseen) {
        resolved_[t] = t;
        stack.push_back(t);
      }
      return t;
    };
    for (const Key& k : p_.keys_.flatten()) {
      auto id = g_.index_of(k);
      if (!id) throw MissingKeyError(k, std::nullopt);
      requested_gids_.push_back(visit(*id));
    }
    while (!stack.empty()) {
      uint32_t gid = stack.back();
      stack.pop_back();
      needed_.push_back(gid);
      if (is_task(gid)) {
        for (uint32_t d : c_.dependencies(gid)) visit(d);
      }
    }
  }

  // Tasks first, then known values, each in graph order (deterministic ids).
  void number() {
    std::sort(needed_.begin(), needed_.end());
    local_.assign(c_.size(), kNone);
    for (int pass = 0; pass < 2; ++pass) {
      for (uint32_t gid : needed_) {
        if (is_task(gid) != (pass == 0)) continue;
        local_[gid] = static_cast<uint32_t>(p_.graph_id_.size());
        p_.graph_id_.push_back(gid);
        if (pass == 0) {
          p_.tasks_.push_back(&g_.node(gid).task());
        } else {
          p_.known_.push_back(cached_[gid] != kNone ? cache_values_[cached_[gid]] : g_.node(gid).literal());
        }
      }
      if (pass == 0) p_.num_tasks_ = static_cast<uint32_t>(p_.graph_id_.size());
    }
  }

  // order() of the graph when the request needs all of it; otherwise of the
  // needed part alone (cached keys as literals), as dask orders a culled graph.
  void prioritize() {
    size_t non_alias = 0;
    for (uint32_t i = 0; i < c_.size(); ++i) non_alias += g_.node(i).is_alias() ? 0 : 1;
    const bool whole = needed_.size() == non_alias && cache_values_.empty();
    std::vector<uint32_t> prio;
    std::vector<uint32_t> sub_of(c_.size(), kNone);
    if (whole) {
      prio = order(g_, c_);
    } else {
      std::vector<uint32_t> part = needed_;
      part.insert(part.end(), needed_aliases_.begin(), needed_aliases_.end());
      std::sort(part.begin(), part.end());
      Graph sub;
      sub.reserve(part.size());
      for (uint32_t gid : part) {
        sub_of[gid] = static_cast<uint32_t>(sub.size());
        if (cached_[gid] != kNone) {
          sub.put(g_.key(gid), cache_values_[cached_[gid]]);
        } else {
          sub.set(g_.key(gid), g_.node(gid));
        }
      }
      prio = order(sub, compile(sub));
    }
    p_.priority_.resize(p_.num_tasks_);
    for (uint32_t u = 0; u < p_.num_tasks_; ++u) {
      uint32_t gid = p_.graph_id_[u];
      p_.priority_[u] = prio[whole ? gid : sub_of[gid]];
    }
  }

  void link() {
    Plan& p = p_;
    const uint32_t m = p.size(), nt = p.num_tasks_;
    p.dep_offsets_.assign(nt + 1, 0);
    p.waiting_.assign(nt, 0);
    std::vector<uint32_t> readers(m + 1, 0);
    for (uint32_t u = 0; u < nt; ++u) {
      for (uint32_t d : c_.dependencies(p.graph_id_[u])) {
        uint32_t v = local_[is_alias(d) ? resolved_[d] : d];
        p.deps_.push_back(v);
        ++readers[v + 1];
        if (v < nt) ++p.waiting_[u];
      }
      p.dep_offsets_[u + 1] = static_cast<uint32_t>(p.deps_.size());
    }
    for (uint32_t v = 0; v < m; ++v) readers[v + 1] += readers[v];
    p.dependent_offsets_ = readers;
    p.dependents_.resize(p.deps_.size());
    for (uint32_t u = 0; u < nt; ++u) {
      for (uint32_t v : p.dependencies(u)) p.dependents_[readers[v]++] = u;
    }
    p.requested_mask_.assign(m, 0);
    for (uint32_t gid : requested_gids_) {
      p.requested_.push_back(local_[gid]);
      p.requested_mask_[local_[gid]] = 1;
    }
    for (uint32_t u = 0; u < nt; ++u) {
      if (p.waiting_[u] == 0) p.initial_ready_.push_back(u);
    }
    // dask's start state: sorted so that the best priority is popped first.
    std::sort(p.initial_ready_.begin(), p.initial_ready_.end(),
              [&](uint32_t a, uint32_t b) { return p.priority_[a] > p.priority_[b]; });
  }

  Plan& p_;
  const Graph& g_;
  CompiledGraph c_;
  std::vector<uint32_t> resolved_;  // per graph id: itself, an alias's target, or kUnseen
  std::vector<uint32_t> cached_;    // per graph id: index into cache_values_, or kNone
  std::vector<Value> cache_values_;
  std::vector<uint32_t> needed_;          // non-alias graph ids the request needs
  std::vector<uint32_t> needed_aliases_;  // aliases on the way
  std::vector<uint32_t> requested_gids_;
  std::vector<uint32_t> local_;  // graph id -> plan id
};

Plan::Plan(const Graph& g, Keys keys, const Cache& cache) : graph_(&g), keys_(std::move(keys)) {
  PlanBuilder(*this, cache).build();
}

}  // namespace tessera
