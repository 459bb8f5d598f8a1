// Building a Plan: cull from the requested keys (cull_ids, which also resolves
// aliases), number the nodes densely (tasks first), order, and lay out CSR
// edges. All of it is linear in the nodes and edges the request needs, plus one
// compile() of the graph unless the caller hands one in.
#include "tessera/scheduler/plan.hpp"

#include <algorithm>
#include <optional>
#include <stdexcept>
#include <string>

#include "optimize/in_parallel.hpp"
#include "optimize/rank_sort.hpp"
#include <absl/strings/str_cat.h>

#include "tessera/graph/callable.hpp"
#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"

namespace tessera {

namespace {

[[noreturn]] int inbox_placeholder() {
  throw Error("an inbox key's placeholder task was run: the scheduler takes its value from the Inbox");
}

// The task of every inbox key in a Plan: what the graph holds there is not
// run (and may be a literal, which has no Task).
const Task& inbox_task() {
  static const Task task(fn("inbox", inbox_placeholder));
  return task;
}

}  // namespace

class PlanBuilder {
 public:
  PlanBuilder(Plan& p, const Cache& cache, const CompiledGraph* c, std::span<const uint32_t> priorities,
              std::span<const Key> inbox)
      : p_(p), g_(*p.graph_), own_(c ? std::nullopt : std::optional<CompiledGraph>(compile(g_))),
        c_(c ? *c : *own_), given_priorities_(priorities) {
    const uint32_t n = c_.size();
    cached_.assign(n, kNone);
    cache.for_each([&](const Key& key, const Value& value) {
      if (auto id = g_.index_of(key)) {
        cached_[*id] = static_cast<uint32_t>(cache_values_.size());
        cache_values_.push_back(value);
      }
    });
    mark_inbox(inbox);
  }

  void build() {
    const std::vector<uint32_t> roots = requested_ids();
    if (given_priorities_.empty() && requests_every_sink(roots)) {
      // The request needs the whole graph: its order need not wait for the cull.
      std::vector<uint32_t> whole;
      detail::in_parallel(
          c_.size(), [&] { whole = order(g_, c_); },
          [&] {
            cull(roots);
            number();
            link();
          });
      take_priorities(whole);
    } else {
      cull(roots);
      number();
      // Ordering and laying out the edges read the numbering and write apart.
      detail::in_parallel(c_.size(), [&] { prioritize(); }, [&] { link(); });
    }
    // dask's start state: sorted so that the best priority is popped first.
    detail::sort_by_rank_descending(p_.initial_ready_, p_.priority_);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;

  // Inbox keys: keys of the graph, none cached; each becomes a task without
  // inputs (culled at, like a cached value).
  void mark_inbox(std::span<const Key> inbox) {
    p_.inbox_keys_.assign(inbox.begin(), inbox.end());
    if (inbox.empty()) return;
    inbox_.assign(c_.size(), 0);
    for (const Key& k : inbox) {
      const auto id = g_.index_of(k);
      if (!id) throw ValueError(absl::StrCat("Plan: inbox key ", k.brief(), " is not a key of the graph"));
      if (cached_[*id] != kNone) {
        throw ValueError(absl::StrCat("Plan: key ", k.brief(),
                                      " is both in the cache and in the inbox; expected one source for it"));
      }
      inbox_[*id] = 1;
    }
  }

  bool is_inbox(uint32_t gid) const { return !inbox_.empty() && inbox_[gid] != 0; }

  bool is_task(uint32_t gid) const {
    return is_inbox(gid) || (cached_[gid] == kNone && g_.node(gid).is_task());
  }

  // The graph ids of the requested keys, in Keys::flatten order.
  std::vector<uint32_t> requested_ids() const {
    std::vector<uint32_t> roots;
    for (const Key& k : p_.keys_.flatten()) {
      auto id = g_.index_of(k);
      if (!id) throw MissingKeyError(k, std::nullopt);
      roots.push_back(*id);
    }
    return roots;
  }

  // Whether the request needs every node and takes none from the cache: every
  // node reaches a sink, and every sink is requested.
  bool requests_every_sink(std::span<const uint32_t> roots) const {
    if (!cache_values_.empty() || !inbox_.empty()) return false;
    std::vector<uint8_t> requested(c_.size(), 0);
    for (uint32_t id : roots) requested[id] = 1;
    for (uint32_t i = 0; i < c_.size(); ++i) {
      if (c_.dependents(i).empty() && !requested[i]) return false;
    }
    return true;
  }

  // Stops at literals and cached values; aliases resolve to their targets.
  void cull(std::span<const uint32_t> roots) {
    std::vector<uint8_t> known;
    if (!cache_values_.empty() || !inbox_.empty()) {
      known.resize(c_.size());
      for (uint32_t i = 0; i < c_.size(); ++i) known[i] = cached_[i] != kNone || is_inbox(i);
    }
    culled_ = cull_ids(g_, c_, roots, known);
  }

  // Tasks first, then known values, each in graph order (deterministic ids).
  void number() {
    local_.assign(c_.size(), kNone);
    for (int pass = 0; pass < 2; ++pass) {
      for (uint32_t gid : culled_.nodes) {
        if (is_task(gid) != (pass == 0)) continue;
        local_[gid] = static_cast<uint32_t>(p_.graph_id_.size());
        p_.graph_id_.push_back(gid);
        if (pass == 0) {
          p_.tasks_.push_back(is_inbox(gid) ? &inbox_task() : &g_.node(gid).task());
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
    if (!given_priorities_.empty()) return take_priorities(given_priorities_);
    size_t non_alias = 0;
    for (uint32_t i = 0; i < c_.size(); ++i) non_alias += g_.node(i).is_alias() ? 0 : 1;
    if (culled_.nodes.size() == non_alias && cache_values_.empty() && inbox_.empty()) {
      return take_priorities(order(g_, c_));
    }
    std::vector<uint32_t> sub_of(c_.size(), kNone);
    std::vector<uint32_t> part = culled_.nodes;
    part.insert(part.end(), culled_.aliases.begin(), culled_.aliases.end());
    std::sort(part.begin(), part.end());
    Graph sub;
    sub.reserve(part.size());
    for (uint32_t gid : part) {
      sub_of[gid] = static_cast<uint32_t>(sub.size());
      if (cached_[gid] != kNone) {
        sub.put(g_.key(gid), cache_values_[cached_[gid]]);
      } else if (is_inbox(gid)) {
        sub.set(g_.key(gid), Node(inbox_task()));  // a root task: order places its readers
      } else {
        sub.set(g_.key(gid), g_.node(gid));
      }
    }
    const std::vector<uint32_t> prio = order(sub, compile(sub));
    p_.priority_.resize(p_.num_tasks_);
    for (uint32_t u = 0; u < p_.num_tasks_; ++u) p_.priority_[u] = prio[sub_of[p_.graph_id_[u]]];
  }

  // Each task's priority from priorities by graph id.
  void take_priorities(std::span<const uint32_t> by_graph_id) {
    p_.priority_.resize(p_.num_tasks_);
    for (uint32_t u = 0; u < p_.num_tasks_; ++u) p_.priority_[u] = by_graph_id[p_.graph_id_[u]];
  }

  void link() {
    Plan& p = p_;
    const uint32_t m = p.size(), nt = p.num_tasks_;
    p.waiting_.assign(nt, 0);
    p.deps_.offsets.reserve(size_t{nt} + 1);
    for (uint32_t u = 0; u < nt; ++u) {
      if (is_inbox(p.graph_id_[u])) {
        p.inbox_tasks_.push_back(u);
        p.deps_.end_row();
        continue;
      }
      for (uint32_t d : c_.dependencies(p.graph_id_[u])) {
        const uint32_t v = local_[culled_.target[d]];
        p.deps_.ids.push_back(v);
        if (v < nt) ++p.waiting_[u];
      }
      p.deps_.end_row();
    }
    p.dependents_ = p.deps_.transpose(m);
    p.requested_mask_.assign(m, 0);
    for (uint32_t gid : culled_.roots) {
      p.requested_.push_back(local_[gid]);
      p.requested_mask_[local_[gid]] = 1;
    }
    for (uint32_t u = 0; u < nt; ++u) {
      if (p.waiting_[u] == 0 && !is_inbox(p.graph_id_[u])) p.initial_ready_.push_back(u);
    }
  }

  Plan& p_;
  const Graph& g_;
  std::optional<CompiledGraph> own_;  // when the caller gave none
  const CompiledGraph& c_;
  std::span<const uint32_t> given_priorities_;  // empty: order here
  std::vector<uint32_t> cached_;    // per graph id: index into cache_values_, or kNone
  std::vector<Value> cache_values_;
  std::vector<uint8_t> inbox_;  // per graph id, when there are inbox keys: 1 for one
  CulledIds culled_;
  std::vector<uint32_t> local_;  // graph id -> plan id
};

Plan::Plan(const Graph& g, Keys keys, const Cache& cache, std::span<const Key> inbox)
    : graph_(&g), keys_(std::move(keys)) {
  PlanBuilder(*this, cache, nullptr, {}, inbox).build();
}

Plan::Plan(const Graph& g, const CompiledGraph& c, std::span<const uint32_t> priorities, Keys keys,
           const Cache& cache, std::span<const Key> inbox)
    : graph_(&g), keys_(std::move(keys)) {
  if (c.size() != g.size() || (!priorities.empty() && priorities.size() != g.size())) {
    throw ValueError("Plan: expected a compiled form and priorities of the graph's " +
                                std::to_string(g.size()) + " nodes, found " + std::to_string(c.size()) +
                                " compiled nodes and " + std::to_string(priorities.size()) + " priorities");
  }
  PlanBuilder(*this, cache, &c, priorities, inbox).build();
}

}  // namespace tessera
