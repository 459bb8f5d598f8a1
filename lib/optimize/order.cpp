// order(): static priorities after dask's critical-path order (dask/order.py,
// the 2024 rewrite, dask PR 10660).
//
// The idea, in dask's words reduced to ours: pick a target leaf, walk back from
// it along the "most valuable" dependency (largest sort key) to a root: that
// chain is the critical path. Walk the path forwards; a node that cannot run yet
// pushes its missing dependencies first ("walking back"). Whenever a node runs,
// its dependents that become runnable are either run at once (a linear chain) or
// noted as runnable; after walking back, the runnable ones are followed forwards
// up to the next reducer, and run only when enough of a reducer's inputs are
// known to be reachable that running them frees memory (process_runnables).
// The next target prefers leaves that need the fewest additional roots, then
// one next to what just ran, then the one whose roots have run the most.
//
// Ties are broken by the sort key (total dependencies, dependencies, connected
// roots, -max dependents of those roots, then the Key's dask sortkey order).
#include "tessera/optimize/order.hpp"

#include <algorithm>
#include <deque>
#include <optional>
#include <stdexcept>
#include <string>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "eager.hpp"
#include "in_parallel.hpp"
#include "order_detail.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/optimize/graph_ops.hpp"

namespace tessera {
namespace {

using detail::IdSet;
using Path = std::vector<uint32_t>;
constexpr uint32_t kUnset = UINT32_MAX;

class Orderer {
 public:
  Orderer(const Graph& g, const CompiledGraph& c);
  std::vector<uint32_t> run();

 private:
  bool less(uint32_t a, uint32_t b) const;
  void sort_by_key(std::vector<uint32_t>& v) const {
    std::sort(v.begin(), v.end(), [this](uint32_t a, uint32_t b) { return less(a, b); });
  }
  bool done(uint32_t i) const { return prio_[i] != kUnset; }
  void assign(uint32_t i) { prio_[i] = next_++; }
  void lower_leaf_degrees(uint32_t root);
  void add_to_result(uint32_t item);
  void add_path(const Path& p) {
    for (uint32_t k : p) add_to_result(k);
  }
  void process_runnables();
  void walk_branch(uint32_t nsplits, Path path, std::deque<std::pair<uint32_t, Path>>& branches);
  uint32_t get_target();
  bool use_longest_path() const;
  void walk_critical_path(uint32_t target);

  const Graph& g_;
  detail::OrderGraph og_;
  uint32_t n_;
  std::vector<uint64_t> total_deps_;
  std::vector<uint32_t> roots_connected_, leafs_connected_;  // how many
  std::vector<IdSet> leafs_of_root_;  // the leaves each root reaches
  std::vector<std::unique_ptr<const std::vector<uint32_t>>> leaf_sets_;  // what leafs_of_root_ points at
  std::vector<uint32_t> max_dependents_;
  std::vector<uint32_t> num_needed_;
  std::vector<uint8_t> is_root_, is_leaf_, runnable_hull_;
  detail::DenseIdSet reachable_hull_;
  std::vector<uint32_t> runnable_;
  absl::flat_hash_map<uint32_t, std::vector<Path>> known_paths_;
  detail::LeafDegrees leafs_per_degree_;
  std::vector<uint32_t> leaf_nodes_sorted_;  // popped from the back
  std::vector<uint32_t> prio_;
  std::vector<uint32_t> next_items_;  // add_to_result's work list
  uint32_t next_ = 0;
  uint32_t scan_ = 0;  // fallback target search position
};

Orderer::Orderer(const Graph& g, const CompiledGraph& c)
    : g_(g), og_(detail::make_order_graph(g, c)), n_(og_.n) {
  total_deps_ = detail::total_dependencies(og_);
  // The count walks the graph from its roots: a node it never reached (each
  // reached one counts itself) sits on or behind a cycle, which
  // topological_order names. A walk of its own for every graph cost more.
  for (uint32_t i = 0; i < n_; ++i) {
    if (total_deps_[i] == 0 && !og_.removed[i]) topological_order(g, c);  // throws CycleError
  }
  // The two walks (from the roots up, from the leaves down) share nothing but
  // the graph they read. Of the leaves, only the roots' counts are read
  // (use_longest_path).
  detail::Connected roots, leafs;
  auto up = [&] { roots = detail::connecting_to_roots(og_, og_.deps, og_.dents, {.sets = false, .all_counts = true}); };
  auto down = [&] {
    leafs = detail::connecting_to_roots(og_, og_.dents, og_.deps, {.sets = true, .all_counts = false});
  };
  detail::in_parallel(og_.n, up, down);
  roots_connected_ = std::move(roots.counts);
  max_dependents_ = std::move(roots.max_dependents);
  leafs_connected_ = std::move(leafs.counts);
  leafs_of_root_ = std::move(leafs.sets);
  leaf_sets_ = std::move(leafs.owned);
  num_needed_.resize(n_);
  is_root_.assign(n_, 0);
  is_leaf_.assign(n_, 0);
  runnable_hull_.assign(n_, 0);
  reachable_hull_ = detail::DenseIdSet(n_);
  leafs_per_degree_ = detail::LeafDegrees(n_);
  prio_.assign(n_, kUnset);
  for (uint32_t i = 0; i < n_; ++i) {
    num_needed_[i] = static_cast<uint32_t>(og_.deps[i].size());
    if (og_.removed[i]) continue;
    is_root_[i] = og_.deps[i].empty();
    is_leaf_[i] = og_.dents[i].empty();
    if (is_leaf_[i]) leaf_nodes_sorted_.push_back(i);
    if (is_leaf_[i] && !is_root_[i]) {
      leafs_per_degree_.insert(i, roots_connected_[i]);
    }
  }
  sort_by_key(leaf_nodes_sorted_);
  if (!use_longest_path()) std::reverse(leaf_nodes_sorted_.begin(), leaf_nodes_sorted_.end());
}

// dask's sort_key: (total dependencies, dependencies, connected roots,
// -max dependents, key).
bool Orderer::less(uint32_t a, uint32_t b) const {
  if (total_deps_[a] != total_deps_[b]) return total_deps_[a] < total_deps_[b];
  const size_t da = og_.deps[a].size(), db = og_.deps[b].size();
  if (da != db) return da < db;
  const uint32_t ra = roots_connected_[a], rb = roots_connected_[b];
  if (ra != rb) return ra < rb;
  if (max_dependents_[a] != max_dependents_[b]) return max_dependents_[a] > max_dependents_[b];
  if (a == b) return false;
  return g_.key(a) < g_.key(b);
}

// Heavy reducer/splitter shapes do well with the classic longest path first;
// a graph of about as many leaves as roots, where the roots reach different
// numbers of leaves, does better taking the quickest path first.
bool Orderer::use_longest_path() const {
  size_t nroots = 0, nleaves = 0;
  for (uint32_t i = 0; i < n_; ++i) {
    nroots += is_root_[i];
    nleaves += is_leaf_[i];
  }
  if (nroots == 0) return true;
  const double diff = nroots > nleaves ? double(nroots - nleaves) : double(nleaves - nroots);
  if (diff / double(nroots) >= 0.8) return true;
  size_t size = 0;
  for (uint32_t i = 0; i < n_; ++i) {
    if (!is_root_[i]) continue;
    const size_t s = leafs_connected_[i];
    if (size == 0) {
      size = s;
    } else if (size != s) {
      return false;
    }
  }
  return true;
}

// A root ran: each leaf it reaches needs one root fewer.
void Orderer::lower_leaf_degrees(uint32_t root) {
  for (uint32_t leaf : *leafs_of_root_[root]) {
    if (is_leaf_[leaf] && leafs_per_degree_.degree(leaf) != 0) leafs_per_degree_.lower(leaf);
  }
}

void Orderer::add_to_result(uint32_t first) {
  std::vector<uint32_t>& next_items = next_items_;  // kept across calls: one allocation per order
  next_items.assign(1, first);
  while (!next_items.empty()) {
    const uint32_t item = next_items.back();
    next_items.pop_back();
    runnable_hull_[item] = 0;
    reachable_hull_.erase(item);
    is_leaf_[item] = 0;
    if (done(item)) continue;
    for (uint32_t j = og_.data_offsets[item]; j < og_.data_offsets[item + 1]; ++j) {
      if (!done(og_.data_ids[j])) assign(og_.data_ids[j]);
    }
    assign(item);
    if (is_root_[item]) lower_leaf_degrees(item);
    const auto dents = og_.dents[item];
    for (uint32_t dep : dents) {
      reachable_hull_.insert(dep);
      if (--num_needed_[dep] == 0) {
        if (dents.size() == 1) {
          next_items.push_back(dep);
        } else {
          runnable_.push_back(dep);
        }
      }
    }
  }
}

// Follows each runnable task forwards to the next reducer and runs the paths
// once they lead to a leaf or make a reducer runnable (see the file comment).
void Orderer::process_runnables() {
  while (!runnable_.empty()) {
    std::vector<uint32_t> candidates;
    candidates.swap(runnable_);
    while (!candidates.empty()) {
      const uint32_t key = candidates.back();
      candidates.pop_back();
      if (runnable_hull_[key] || done(key)) continue;
      if (is_leaf_[key]) {
        add_to_result(key);
        continue;
      }
      std::deque<std::pair<uint32_t, Path>> branches;
      branches.emplace_back(0, Path{key});
      while (!branches.empty()) {
        auto [nsplits, path] = std::move(branches.front());
        branches.pop_front();
        walk_branch(nsplits, std::move(path), branches);
      }
    }
  }
}

void Orderer::walk_branch(uint32_t nsplits, Path path,
                          std::deque<std::pair<uint32_t, Path>>& branches) {
  while (true) {
    const uint32_t current = path.back();
    runnable_hull_[current] = 1;
    const auto down = og_.dents[current];
    const auto up = og_.deps[current];
    if (down.empty()) {
      if (num_needed_[current] <= 1) {
        add_path(path);
      } else {
        runnable_hull_[current] = 0;
      }
    } else if (path.size() == 1 || up.size() == 1) {
      if (down.size() == 1) {
        path.push_back(down[0]);
        continue;
      }
      // A splitter: follow each branch that is genuinely split off (its task
      // reads only this one), not ones that interleave with other inputs.
      ++nsplits;
      std::vector<uint32_t> sorted(down.begin(), down.end());
      sort_by_key(sorted);
      for (uint32_t d : sorted) {
        if (og_.deps[d].size() != 1) continue;
        Path branch = path;
        branch.push_back(d);
        branches.emplace_back(nsplits, std::move(branch));
      }
    } else if (auto it = known_paths_.find(current); it != known_paths_.end()) {
      it->second.push_back(std::move(path));
      runnable_hull_[current] = 0;
      if (it->second.size() >= num_needed_[current]) {
        std::deque<Path> pruned;
        for (Path& p : it->second) {
          if (!done(p[p.size() - 2])) pruned.push_back(std::move(p));
        }
        known_paths_.erase(it);
        if (pruned.size() < num_needed_[current]) {
          known_paths_[current].assign(std::make_move_iterator(pruned.begin()),
                                       std::make_move_iterator(pruned.end()));
        } else if (nsplits > 1) {
          Path merged;
          for (const Path& p : pruned) merged.insert(merged.end(), p.begin(), p.end());
          branches.emplace_back(nsplits - 1, std::move(merged));
        } else {
          while (!pruned.empty()) {
            Path p = std::move(pruned.front());
            pruned.pop_front();
            bool blocked = false;
            for (uint32_t k : p) {
              if (num_needed_[k]) {
                blocked = true;
                break;
              }
              add_to_result(k);
            }
            if (blocked) pruned.push_back(std::move(p));
          }
        }
      }
    } else if (up.size() > 1 && num_needed_[current] <= 1) {
      add_path(path);
    } else {
      runnable_hull_[current] = 0;
      known_paths_[current].push_back(std::move(path));
    }
    return;
  }
}

uint32_t Orderer::get_target() {
  if (!reachable_hull_.empty() && !leafs_per_degree_.empty()) {
    // Mid-run: prefer a leaf that needs the fewest additional roots, and among
    // those one that touches what already ran.
    const auto& fewest = leafs_per_degree_.lowest();
    uint32_t best = kUnset;
    auto consider = [&](uint32_t x) {
      if (best == kUnset || less(x, best)) best = x;
    };
    if (reachable_hull_.size() < fewest.size()) {
      for (uint32_t x : reachable_hull_) {
        if (leafs_per_degree_.in_lowest(x)) consider(x);
      }
    } else {
      for (uint32_t x : fewest) {
        if (reachable_hull_.contains(x)) consider(x);
      }
    }
    if (best == kUnset) {
      // None touches what just ran: prefer the leaf whose roots have run the
      // most already, so the run finishes the part of the graph it started
      // instead of opening another front beside it.
      uint32_t most = 0;
      for (uint32_t x : fewest) {
        const uint32_t progress = roots_connected_[x] - leafs_per_degree_.degree(x);
        if (best == kUnset || progress > most || (progress == most && less(x, best))) {
          best = x;
          most = progress;
        }
      }
    }
    return best;
  }
  if (!leaf_nodes_sorted_.empty()) {
    const uint32_t t = leaf_nodes_sorted_.back();
    leaf_nodes_sorted_.pop_back();
    return t;
  }
  while (done(scan_)) ++scan_;  // unreachable for a DAG; kept total
  return scan_;
}

void Orderer::walk_critical_path(uint32_t target) {
  // A. The critical path: from the target back along the largest dependency.
  std::vector<uint32_t> path{target};
  std::vector<uint32_t> next(og_.deps[target].begin(), og_.deps[target].end());
  while (!next.empty()) {
    const uint32_t item =
        *std::max_element(next.begin(), next.end(), [this](uint32_t a, uint32_t b) { return less(a, b); });
    path.push_back(item);
    next.clear();
    for (uint32_t d : og_.deps[item]) {
      if (!done(d)) next.push_back(d);
    }
    sort_by_key(next);
    path.insert(path.end(), next.begin(), next.end());
  }
  // B. Walk it, walking back to whatever a node still needs.
  bool walked_back = false;
  std::vector<uint32_t> missing, unknown, known;
  while (!path.empty()) {
    const uint32_t item = path.back();
    if (done(item)) {
      path.pop_back();
      continue;
    }
    if (num_needed_[item]) {  // stays on the path, under what it needs
      missing.clear();
      for (uint32_t d : og_.deps[item]) {
        if (!done(d)) missing.push_back(d);
      }
      sort_by_key(missing);
      unknown.clear();
      known.clear();
      for (uint32_t d : missing) (known_paths_.contains(d) ? known : unknown).push_back(d);
      if (unknown.size() > 1) walked_back = true;
      path.insert(path.end(), unknown.begin(), unknown.end());
      for (uint32_t d : known) {
        auto node = known_paths_.extract(d);
        for (const Path& p : node.mapped()) path.insert(path.end(), p.rbegin(), p.rend());
      }
      continue;
    }
    path.pop_back();
    if (walked_back && runnable_.size() < path.size()) process_runnables();
    add_to_result(item);
  }
  process_runnables();
}

std::vector<uint32_t> Orderer::run() {
  while (next_ < n_) walk_critical_path(get_target());
  return std::move(prio_);
}

// Each task's dependencies sorted by key, once for both depth-first walks
// (only siblings are compared: no sort of every key). Most tasks read one to
// three others: an insertion sort.
Csr dependencies_by_key(const Graph& g, const CompiledGraph& c) {
  Csr sorted;
  sorted.offsets = c.dependencies().offsets;
  sorted.ids = c.dependencies().ids;
  for (uint32_t v = 0; v < c.size(); ++v) {
    uint32_t* row = sorted.ids.data() + sorted.offsets[v];
    const uint32_t len = sorted.offsets[v + 1] - sorted.offsets[v];
    for (uint32_t i = 1; i < len; ++i) {
      const uint32_t d = row[i];
      uint32_t j = i;
      for (; j > 0 && g.key(d) < g.key(row[j - 1]); --j) row[j] = row[j - 1];
      row[j] = d;
    }
  }
  return sorted;
}

// Priorities from a depth-first walk from the sinks, in key order: each sink
// (`sinks`, by key) after everything it needs that is not placed yet, a
// task's dependencies walked in key order (`by_key`; `reverse`: the last key
// first), each task placed once its dependencies are. Iterative: the path's
// tasks, each with the next of its dependencies to walk.
std::vector<uint32_t> depth_first(const Csr& by_key, std::span<const uint32_t> sinks, bool reverse) {
  const uint32_t n = by_key.rows();
  std::vector<uint32_t> prio(n, kUnset);
  struct Frame {
    uint32_t node;
    uint32_t next;  // dependencies walked so far
  };
  std::vector<Frame> path;
  uint32_t placed = 0;
  for (uint32_t s : sinks) {
    if (prio[s] != kUnset) continue;
    prio[s] = kUnset - 1;  // on the path
    path.push_back({s, 0});
    while (!path.empty()) {
      Frame& top = path.back();
      const std::span<const uint32_t> deps = by_key[top.node];
      uint32_t d = kUnset;
      while (top.next < deps.size()) {
        const uint32_t k = top.next++;
        const uint32_t candidate = deps[reverse ? deps.size() - 1 - k : k];
        if (prio[candidate] == kUnset) {
          d = candidate;
          break;
        }
      }
      if (d == kUnset) {
        prio[top.node] = placed++;
        path.pop_back();
        continue;
      }
      prio[d] = kUnset - 1;
      path.push_back({d, 0});
    }
  }
  return prio;
}

}  // namespace

std::vector<uint32_t> order(const Graph& g) { return order(g, compile(g)); }

std::vector<uint32_t> order(const Graph& g, const CompiledGraph& c) {
  if (c.size() == 0) return {};
  // The schedulers run whatever a completion makes ready first, so an order
  // mostly chooses which root starts next. Besides the critical-path order,
  // try sequencing the roots greedily by their effect on memory, and keep the
  // order the single-worker model says holds the fewest results (dask's own
  // order.py notes that computing several orders and keeping the one with
  // less pressure is the natural next step). The greedy look-ahead tries at
  // most `candidates` roots per step; the budget shrinks as graphs grow so the
  // whole stays near-linear. The model is built while the critical-path order
  // is made.
  std::vector<uint32_t> best;
  std::optional<detail::EagerGraph> model;
  detail::in_parallel(
      c.size(), [&] { best = Orderer(g, c).run(); }, [&] { model.emplace(g, c, std::span<const Key>()); });
  const detail::EagerGraph& eg = *model;
  const uint32_t candidates = static_cast<uint32_t>(std::clamp<size_t>(4'000'000 / c.size(), 4, 128));
  uint32_t best_held = detail::eager_max_held(eg, best);
  // No order holds fewer than every sink's result (never released) or all the
  // inputs of one task (held together when it runs), nor, on a forest, its
  // Sethi-Ullman count: when the critical-path order reaches that bound, the
  // alternatives cannot beat it.
  uint32_t lower_bound = 0, sinks = 0;
  for (uint32_t i = 0; i < eg.n; ++i) {
    if (!eg.task[i]) continue;
    sinks += eg.dents[i].empty() ? 1 : 0;
    lower_bound = std::max(lower_bound, static_cast<uint32_t>(eg.deps[i].size()));
  }
  lower_bound = std::max(lower_bound, sinks);
  // The forest's bound takes a walk of the graph: only when the others fall short.
  if (best_held > lower_bound) lower_bound = std::max(lower_bound, detail::forest_min_held(eg));
  if (best_held <= lower_bound) return best;
  // A sequence that holds as many as the best so far is dropped: it gives up there.
  struct Tried {
    std::vector<uint32_t> order;
    uint32_t held = 0;
  };
  // Each sequence starts from the best order so far.
  auto sequence = [&](detail::RootChoice choice) {
    Tried t;
    t.order = detail::eager_sequence(g, c, eg, best, choice, candidates, t.held, best_held);
    return t;
  };
  auto keep_if_better = [&](Tried& t) {
    if (t.held >= best_held) return;
    best_held = t.held;
    best = std::move(t.order);
  };
  // The first two greedy sequences both start from the critical-path order,
  // at once; the first of them to hold fewest is kept. (Starting the second
  // from the first when the first wins, as one after another could, gives the
  // same orders on every graph of tests/data/graphs.)
  Tried least_growth, best_per_task;
  detail::in_parallel(c.size(), [&] { least_growth = sequence(detail::RootChoice::least_growth); },
                      [&] { best_per_task = sequence(detail::RootChoice::best_per_task); });
  keep_if_better(least_growth);
  keep_if_better(best_per_task);
  // The pair look-ahead's budget covers graphs of up to some tens of
  // thousands of tasks; on larger ones it would refine only the first roots,
  // for the price of one more simulation of the whole graph (a third more
  // instructions in order() on bench/overhead's 90,000-task stencil).
  constexpr size_t kLookAheadTasks = 50'000;
  if (best_held > lower_bound && c.size() <= kLookAheadTasks) {
    Tried look_ahead = sequence(detail::RootChoice::look_ahead);
    keep_if_better(look_ahead);
  }
  // Depth-first orders: each output finished before the next one starts.
  // Where an output's inputs overlap its neighbours' (rechunk-merge tasks
  // feeding a diff), the sequences above, which pick one root at a time by its
  // effect, open many outputs at once; dask's order, which walks this way,
  // held up to 12 results fewer (tests/data/graphs/rechunk_where_diff_*). Such
  // a walk replaces the best order only when both the model and dask's own
  // metric (order_pressure) say it holds fewer: on the small shapes of dask's
  // order tests they disagree, and the order those tests pin down stays. Two
  // walks, each with its simulations: linear but for sorting each task's
  // dependencies by key. Like the look-ahead, they run on graphs of up to
  // some tens of thousands of tasks: on bench/overhead's 90,000-task stencil,
  // where neither walk wins, they cost a seventh more instructions in Plan
  // (cull + order), with the walk and the key comparisons the larger part.
  constexpr size_t kDepthFirstTasks = 50'000;
  if (best_held > lower_bound && c.size() <= kDepthFirstTasks) {
    const Csr by_key = dependencies_by_key(g, c);
    std::vector<uint32_t> sinks;
    for (uint32_t i = 0; i < c.size(); ++i) {
      if (c.dependents(i).empty()) sinks.push_back(i);
    }
    std::sort(sinks.begin(), sinks.end(), [&](uint32_t a, uint32_t b) { return g.key(a) < g.key(b); });
    std::optional<uint32_t> best_pressure;  // the metric of `best`, once a walk needs it
    for (const bool reverse : {false, true}) {
      std::vector<uint32_t> dfs = depth_first(by_key, sinks, reverse);
      const uint32_t held = detail::eager_max_held(eg, dfs, best_held);
      if (held >= best_held) continue;
      if (!best_pressure) best_pressure = order_pressure(c, best);
      const uint32_t pressure = order_pressure(c, dfs);
      if (pressure >= *best_pressure) continue;
      best_held = held;
      best_pressure = pressure;
      best = std::move(dfs);
    }
  }
  return best;
}

uint32_t sync_pressure(const Graph& g, const CompiledGraph& c, std::span<const uint32_t> priorities,
                       std::span<const Key> outputs) {
  if (priorities.size() != c.size()) {
    throw ValueError("sync_pressure: expected one priority per node (" + std::to_string(c.size()) +
                                "), found " + std::to_string(priorities.size()));
  }
  return detail::eager_max_held(detail::EagerGraph(g, c, outputs), priorities);
}

}  // namespace tessera
