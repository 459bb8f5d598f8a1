// The single-worker model order() evaluates orders with; see eager.hpp.
#include "eager.hpp"

#include <algorithm>
#include <functional>
#include <limits>
#include <optional>
#include <tuple>

#include "rank_sort.hpp"
#include "tessera/optimize/graph_ops.hpp"

namespace tessera::detail {

EagerGraph::EagerGraph(const Graph& g, const CompiledGraph& c, std::span<const Key> outputs) : n(c.size()) {
  task.assign(n, 0);
  kept.assign(n, 0);
  // The schedulers run only what the requested keys need (all of the graph
  // when none are given); cull_ids also gives where each alias chain ends.
  // With no outputs and no aliases (what order() asks for, mostly) that is
  // every node, standing for itself: no cull needed.
  bool aliases = false;
  for (uint32_t i = 0; i < n && !aliases; ++i) aliases = g.node(i).is_alias();
  std::vector<uint32_t> target;  // per id: the node its alias chain ends at
  if (outputs.empty() && !aliases) {
    target.resize(n);
    for (uint32_t i = 0; i < n; ++i) {
      target[i] = i;
      task[i] = g.node(i).is_task();
    }
  } else {
    std::vector<uint32_t> roots;
    if (outputs.empty()) {
      roots.resize(n);
      for (uint32_t i = 0; i < n; ++i) roots[i] = i;
    } else {
      for (const Key& k : outputs) {
        if (auto i = g.index_of(k)) roots.push_back(*i);
      }
    }
    CulledIds culled = cull_ids(g, c, roots);
    if (!outputs.empty()) {
      for (uint32_t r : culled.roots) kept[r] = 1;
    }
    for (uint32_t i : culled.nodes) task[i] = g.node(i).is_task();
    target = std::move(culled.target);
  }
  // Each task's distinct task dependencies; `seen_by` marks which task listed
  // a dependency last, so a task with many inputs stays linear.
  std::vector<uint32_t> seen_by(n, UINT32_MAX);
  for (uint32_t i = 0; i < n; ++i) {
    if (task[i]) {
      for (uint32_t d : c.dependencies(i)) {
        const uint32_t r = target[d];
        if (task[r] && seen_by[r] != i) {
          seen_by[r] = i;
          deps.ids.push_back(r);
        }
      }
    }
    deps.end_row();
  }
  // Every edge kept, each node standing for itself: the rows are the compiled
  // graph's, and so are their dependents (a copy, not a second transpose).
  const bool same_edges = outputs.empty() && !aliases && deps.ids.size() == c.num_edges();
  dents = same_edges ? c.dependents() : deps.transpose(n);
}

namespace {

// The model's run state, with undo, so that a root's effect can be tried and
// taken back. (Not the schedulers' detail::Run, which runs tasks for real.)
class Simulation {
 public:
  Simulation(const EagerGraph& eg, std::span<const uint32_t> rank) : eg_(eg), rank_(rank) {
    waiting_.resize(eg.n);
    readers_left_.resize(eg.n);
    for (uint32_t i = 0; i < eg.n; ++i) {
      readers_left_[i] = static_cast<uint32_t>(eg.dents[i].size());
      waiting_[i] = static_cast<uint32_t>(eg.deps[i].size());
    }
  }

  //! Tasks ready at the start, best rank last (the top of the stack).
  std::vector<uint32_t> initial_ready() const {
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < eg_.n; ++i) {
      if (eg_.task[i] && waiting_[i] == 0) ready.push_back(i);
    }
    sort_by_rank_descending(ready, rank_);
    return ready;
  }

  struct Effect {
    int64_t net = 0;   // results held after, minus before
    int64_t peak = 0;  // largest rise on the way
    uint64_t ran = 0;  // tasks run
    bool complete = true;
  };

  //! Runs `root` and then, last-ready first, everything that becomes ready.
  //! `record` gets each task run; `trial` notes the tasks it runs for undo().
  //! It stops after `limit` tasks, or once the rise reaches `peak_limit`
  //! (then `complete` is false and the run state is left mid-cascade).
  template <class F>
  Effect cascade(uint32_t root, bool trial, F&& record, uint64_t limit = UINT64_MAX,
                 int64_t peak_limit = INT64_MAX) {
    Effect e;
    stack_.assign(1, root);
    while (!stack_.empty()) {
      if (e.ran == limit || e.peak >= peak_limit) {
        e.complete = false;
        break;
      }
      const uint32_t t = stack_.back();
      stack_.pop_back();
      record(t);
      if (trial) tried_.push_back(t);
      ++e.ran;
      ++e.net;
      const size_t from = stack_.size();
      for (uint32_t d : eg_.dents[t]) {
        if (--waiting_[d] == 0) stack_.push_back(d);
      }
      sort_worst_first(stack_, from);
      for (uint32_t d : eg_.deps[t]) {
        if (--readers_left_[d] == 0 && !eg_.kept[d]) --e.net;
      }
      e.peak = std::max(e.peak, e.net);
    }
    return e;
  }

  //! Where the trials stand; undo(mark) takes back every trial since. A task
  //! that ran counted down exactly its dependents' waits and its dependencies'
  //! readers, so counting them up again restores the state: the trials keep
  //! the tasks they ran, not a log of every counter they touched.
  size_t mark() const { return tried_.size(); }
  void undo(size_t mark = 0) {
    while (tried_.size() > mark) {
      const uint32_t t = tried_.back();
      tried_.pop_back();
      for (uint32_t d : eg_.dents[t]) ++waiting_[d];
      for (uint32_t d : eg_.deps[t]) ++readers_left_[d];
    }
  }

  void sort_worst_first(std::vector<uint32_t>& v, size_t from) const {
    if (v.size() - from < 2) return;  // most completions make one task ready, or none
    std::sort(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(),
              [this](uint32_t a, uint32_t b) { return rank_[a] > rank_[b]; });
  }

 private:
  const EagerGraph& eg_;
  std::span<const uint32_t> rank_;
  std::vector<uint32_t> waiting_, readers_left_, stack_;
  std::vector<uint32_t> tried_;  // tasks the trials not yet undone ran, in order
};

// One root's trial in a window of roots: its effect alone, its score, and the
// tasks it ran (a span of PairLookAhead::runs(), for the look-ahead only).
struct First {
  std::tuple<double, double> score;
  uint32_t root = 0;  // index into the roots
  Simulation::Effect effect;
  uint32_t runs_from = 0, runs_to = 0;
};

// The pair look-ahead (RootChoice::look_ahead): each of the first kFirsts roots
// (in base order) followed by the best other one of them; the pair's peak,
// then what it adds, decides. A root that looks dear alone (it opens a part
// of the graph: a block read by two tasks, one of them waiting for another
// root) may be the one that lets the next root close it.
//
// Two roots interact only when a task one of them runs, or a dependency or
// dependent of such a task, is one for the other too: otherwise the second's
// effect after the first is its effect alone, already known. So only the
// interacting pairs are tried again, which keeps a pick near kFirsts trials
// instead of kFirsts^2 where roots interact with few others.
class PairLookAhead {
 public:
  static constexpr size_t kFirsts = 16;  // at most 64: one bit each in a mask

  PairLookAhead(const EagerGraph& eg, Simulation& run, const std::vector<uint32_t>& roots)
      : eg_(eg), run_(run), roots_(roots) {}

  //! The tasks each trial of the window ran (see First::runs_from).
  std::vector<uint32_t>& runs() { return runs_; }

  //! The root to start, from `firsts` (the window's trials, in base order),
  //! with `held` and `worst` where the run stands; nullopt once `budget`
  //! (trial steps) runs out.
  std::optional<uint32_t> choose(const std::vector<First>& firsts, int64_t held, int64_t worst,
                                 uint64_t& budget) {
    if (mask_.empty()) mask_.assign(eg_.n, 0);
    const size_t count = std::min(firsts.size(), kFirsts);
    mark_neighbourhoods(firsts, count);
    std::optional<uint32_t> best;
    std::tuple<double, double> best_pair{};
    for (size_t j = 0; j < count && budget > 0; ++j) {
      const First& a = firsts[j];
      const uint64_t others = interacting(a) & ~(uint64_t{1} << j);
      const size_t m = run_.mark();
      const Simulation::Effect ea = run_.cascade(roots_[a.root], true, [](uint32_t) {}, budget);
      budget -= ea.ran;
      const int64_t held_a = held + ea.net, worst_a = std::max(worst, held + ea.peak);
      // a alone, when it is the last root.
      std::tuple<double, double> pair(double(worst_a), double(ea.net));
      bool paired = false;
      for (size_t k = 0; k < count && budget > 0; ++k) {
        if (k == j) continue;
        Simulation::Effect eb = firsts[k].effect;
        if (others >> k & 1) {
          const size_t mb = run_.mark();
          eb = run_.cascade(roots_[firsts[k].root], true, [](uint32_t) {}, budget);
          run_.undo(mb);
          budget -= eb.ran;
        }
        const std::tuple<double, double> s(double(std::max(worst_a, held_a + eb.peak)), double(ea.net + eb.net));
        if (!paired || s < pair) pair = s;
        paired = true;
      }
      run_.undo(m);
      if (!best || pair < best_pair) {
        best = a.root;
        best_pair = pair;
      }
    }
    clear_marks();
    // A trial cut short by the budget scored less than the root would do.
    if (budget == 0) return std::nullopt;
    return best;
  }

 private:
  // Visits each task a trial ran and their dependencies and dependents.
  template <class F>
  void for_neighbourhood(const First& f, F&& visit) const {
    for (uint32_t i = f.runs_from; i < f.runs_to; ++i) {
      const uint32_t t = runs_[i];
      visit(t);
      for (uint32_t d : eg_.deps[t]) visit(d);
      for (uint32_t d : eg_.dents[t]) visit(d);
    }
  }
  void mark_neighbourhoods(const std::vector<First>& firsts, size_t count) {
    for (size_t j = 0; j < count; ++j) {
      for_neighbourhood(firsts[j], [&](uint32_t t) {
        if (mask_[t] == 0) marked_.push_back(t);
        mask_[t] |= uint64_t{1} << j;
      });
    }
  }
  uint64_t interacting(const First& a) const {
    uint64_t bits = 0;
    for_neighbourhood(a, [&](uint32_t t) { bits |= mask_[t]; });
    return bits;
  }
  void clear_marks() {
    for (uint32_t t : marked_) mask_[t] = 0;
    marked_.clear();
  }

  const EagerGraph& eg_;
  Simulation& run_;
  const std::vector<uint32_t>& roots_;
  std::vector<uint64_t> mask_;    // per task: the firsts whose neighbourhood holds it
  std::vector<uint32_t> marked_;  // the tasks with a mask, to clear
  std::vector<uint32_t> runs_;    // the tasks each trial of the window ran
};

// The effect of each root's trial, kept until the run changes a counter the
// trial read. A trial reads the waits of its tasks' dependents and the
// readers left of their dependencies; a root that runs changes only those of
// the tasks it runs. So a root in the window whose trial touched nothing the
// last run touched would try the same again: its effect is taken from here,
// and the sequence is the one the trials would make (the budget is charged as
// if they ran). On a wide stencil most of the window is far from the last
// root, and the trials were most of eager_sequence.
class TrialCache {
 public:
  TrialCache(const EagerGraph& eg, uint32_t roots)
      : eg_(eg), head_(eg.n, kNone), stamp_(eg.n, kNone), valid_(roots, 0), gen_(roots, 0), effect_(roots) {}

  //! The cached effect of root `i`'s trial, or nullptr.
  const Simulation::Effect* find(uint32_t i) const { return valid_[i] ? &effect_[i] : nullptr; }

  //! Keeps root `i`'s complete trial, which ran `ran`.
  void keep(uint32_t i, const Simulation::Effect& e, std::span<const uint32_t> ran) {
    // Entries of forgotten trials pile up; past a bound, forget every trial
    // (amortized, each entry is made and dropped once).
    if (entries_.size() > 8 * size_t{eg_.n} + 4096) forget_all();
    valid_[i] = 1;
    ++gen_[i];
    effect_[i] = e;
    for (uint32_t t : ran) {
      for (uint32_t d : eg_.deps[t]) note(d, i);
      for (uint32_t d : eg_.dents[t]) note(d, i);
    }
    ++trial_;
  }

  //! A task ran for real: forget the trials that read what it changed.
  void ran(uint32_t t) {
    for (uint32_t d : eg_.deps[t]) touch(d);
    for (uint32_t d : eg_.dents[t]) touch(d);
  }

 private:
  static constexpr uint32_t kNone = UINT32_MAX;
  struct Entry {
    uint32_t root, gen, next;
  };
  void note(uint32_t node, uint32_t root) {
    if (stamp_[node] == trial_) return;  // once per trial
    stamp_[node] = trial_;
    entries_.push_back({root, gen_[root], head_[node]});
    head_[node] = static_cast<uint32_t>(entries_.size() - 1);
  }
  void touch(uint32_t node) {
    // An entry of an earlier trial of the same root (tried again since) is
    // left alone: the new trial's entries say what it read.
    for (uint32_t e = head_[node]; e != kNone; e = entries_[e].next) {
      const Entry& x = entries_[e];
      if (x.gen == gen_[x.root]) valid_[x.root] = 0;
    }
    head_[node] = kNone;
  }
  void forget_all() {
    std::fill(head_.begin(), head_.end(), kNone);
    std::fill(valid_.begin(), valid_.end(), 0);
    entries_.clear();
  }

  const EagerGraph& eg_;
  std::vector<uint32_t> head_;   // per task: its newest entry
  std::vector<uint32_t> stamp_;  // per task: the trial that noted it last
  std::vector<uint8_t> valid_;   // per root
  std::vector<uint32_t> gen_;    // per root: its trials so far
  std::vector<Simulation::Effect> effect_;
  std::vector<Entry> entries_;   // the trials that read each task, as lists
  uint32_t trial_ = 0;
};

}  // namespace

uint32_t eager_max_held(const EagerGraph& eg, std::span<const uint32_t> priorities, uint32_t give_up_at) {
  Simulation run(eg, priorities);
  std::vector<uint32_t> roots = run.initial_ready();
  int64_t held = 0, worst = 0;
  // Roots are only ever on the stack below everything a completion pushes, so
  // running them one cascade at a time, best first, is the LIFO run.
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
    // Track the peak inside the cascade, relative to what was held before.
    Simulation::Effect e = run.cascade(*it, false, [](uint32_t) {}, UINT64_MAX, int64_t{give_up_at} - held);
    worst = std::max(worst, held + e.peak);
    if (worst >= give_up_at) return give_up_at;
    held += e.net;
  }
  return static_cast<uint32_t>(worst);
}

uint32_t forest_min_held(const EagerGraph& eg) {
  for (uint32_t i = 0; i < eg.n; ++i) {
    if (eg.kept[i] || (eg.task[i] && eg.dents[i].size() > 1)) return 0;
  }
  // need[v]: the most results held at once while v's tree runs, v included.
  // Kahn's walk from the roots, so each task is seen after all its inputs.
  std::vector<uint32_t> need(eg.n, 0), waiting(eg.n), ready, sinks, inputs;
  for (uint32_t i = 0; i < eg.n; ++i) {
    if (!eg.task[i]) continue;
    waiting[i] = static_cast<uint32_t>(eg.deps[i].size());
    if (waiting[i] == 0) ready.push_back(i);
  }
  auto most_at_once = [](std::vector<uint32_t>& needs) {
    // Most tasks have one or two inputs: a swap, not a call into std::sort.
    if (needs.size() == 2) {
      if (needs[0] < needs[1]) std::swap(needs[0], needs[1]);
    } else if (needs.size() > 2) {
      std::sort(needs.begin(), needs.end(), std::greater<>());
    }
    uint32_t most = 1;
    for (uint32_t k = 0; k < needs.size(); ++k) most = std::max(most, k + needs[k]);
    return most;
  };
  while (!ready.empty()) {
    const uint32_t v = ready.back();
    ready.pop_back();
    inputs.clear();
    for (uint32_t d : eg.deps[v]) inputs.push_back(need[d]);
    need[v] = most_at_once(inputs);
    if (eg.dents[v].empty()) sinks.push_back(need[v]);
    for (uint32_t d : eg.dents[v]) {
      if (--waiting[d] == 0) ready.push_back(d);
    }
  }
  return sinks.empty() ? 0 : most_at_once(sinks);
}

std::vector<uint32_t> eager_sequence(const Graph& g, const CompiledGraph& c, const EagerGraph& eg,
                                     std::span<const uint32_t> base, RootChoice choice, uint32_t candidates,
                                     uint32_t& max_held, uint32_t give_up_at) {
  const uint32_t n = eg.n;
  Simulation run(eg, base);
  std::vector<uint32_t> roots = run.initial_ready();
  std::reverse(roots.begin(), roots.end());  // best base rank first
  // A linked list over the roots in base order, so the first `candidates`
  // roots still to run are found without skipping over the ones that ran.
  const uint32_t nr = static_cast<uint32_t>(roots.size());
  std::vector<uint32_t> next(nr + 1), prev(nr + 1);  // nr is the head sentinel
  for (uint32_t i = 0; i <= nr; ++i) {
    next[i] = i + 1 == nr + 1 ? nr : i + 1;
    prev[i] = i == 0 ? nr : i - 1;
  }
  next[nr] = nr == 0 ? nr : 0;
  prev[nr] = nr == 0 ? nr : nr - 1;
  if (nr > 0) next[nr - 1] = nr;

  std::vector<uint32_t> prio(n, UINT32_MAX);
  uint32_t counter = 0;
  // Literals and aliases a task reads get their priority just before it: its
  // last input first, each alias followed by what it stands for.
  auto record = [&](uint32_t t) {
    const auto ds = c.dependencies(t);
    for (auto it = ds.rbegin(); it != ds.rend(); ++it) {
      for (uint32_t d = *it; !eg.task[d] && prio[d] == UINT32_MAX; d = c.dependencies(d)[0]) {
        prio[d] = counter++;
        if (!g.node(d).is_alias()) break;
      }
    }
    prio[t] = counter++;
  };
  using Score = std::tuple<double, double>;
  // What the model holds so far: the look-ahead scores a root by the peak it
  // leads to, which depends on where the run stands.
  int64_t held = 0, worst = 0;
  auto score = [&](const Simulation::Effect& e) {
    switch (choice) {
      case RootChoice::least_growth:
        return Score(double(e.net), double(e.peak));
      case RootChoice::best_per_task:
        return Score(double(e.net) / double(e.ran), double(e.peak));
      case RootChoice::look_ahead:
        break;
    }
    return Score(double(std::max(worst, held + e.peak)), double(e.net));
  };
  // The look-ahead may cost at most a fixed number of trial steps per task,
  // so a root whose trial is long (the last input of a big reduction) cannot
  // make the whole quadratic; once the budget is spent, roots go in base order.
  // Sixteen trial steps per task hold as few results as sixty-four did on the
  // eight dask graphs of tests/data/graphs and on the DAGs of bench/overhead
  // and bench/optimize, at a quarter of the cost on large graphs. The pair
  // look-ahead has a budget for its window and one for its pairs, each two
  // steps per task and a fixed part a fifth of the others': on large graphs
  // it refines the first roots and then goes on in base order (the other
  // sequences cover the rest); a graph of a few hundred roots (the 3-D
  // transpose of tests/data/graphs) is looked ahead all the way.
  const bool pairs = choice == RootChoice::look_ahead;
  uint64_t budget = (pairs ? 2 : 16) * uint64_t{n} + (pairs ? 20'000 : 100'000);
  uint64_t pair_budget = pairs ? budget : 0;
  PairLookAhead look_ahead(eg, run, roots);
  // The pair look-ahead tries pairs from where the run stands, so its window
  // is tried afresh (its graphs are small); the others keep their trials.
  std::optional<TrialCache> cache;
  if (!pairs) cache.emplace(eg, nr);
  std::vector<First> firsts;
  while (next[nr] != nr) {
    uint32_t best = next[nr];
    firsts.clear();
    uint32_t seen = 0;
    // The look-ahead weighs the first roots in base order, each with a partner.
    const uint32_t window = pairs ? std::min<uint32_t>(candidates, PairLookAhead::kFirsts) : candidates;
    // A last root left has no rival: its trial (often the rest of the graph) decides nothing.
    const bool rivals = next[next[nr]] != nr;
    for (uint32_t i = next[nr]; i != nr && seen < window && window > 1 && rivals && budget > 0;
         i = next[i], ++seen) {
      std::vector<uint32_t>& runs = look_ahead.runs();
      const uint32_t from = static_cast<uint32_t>(runs.size());
      Simulation::Effect e;
      if (const Simulation::Effect* known = cache ? cache->find(i) : nullptr) {
        e = *known;
        if (e.ran > budget) {  // the trial would stop where the budget ends
          e.ran = budget;
          e.complete = false;
        }
      } else {
        e = run.cascade(roots[i], true, [&](uint32_t t) { runs.push_back(t); }, budget);
        run.undo();
        if (cache && e.complete) cache->keep(i, e, std::span(runs).subspan(from));
      }
      budget -= e.ran;
      if (!e.complete) break;
      if (!pairs) runs.resize(from);  // only the look-ahead reads them later
      firsts.push_back({score(e), i, e, from, static_cast<uint32_t>(runs.size())});
    }
    if (!firsts.empty()) {
      // The first of the best (the window is in base order).
      best = std::min_element(firsts.begin(), firsts.end(),
                              [](const First& a, const First& b) { return a.score < b.score; })
                 ->root;
    }
    if (pairs && firsts.size() > 1 && pair_budget > 0) {
      if (const auto a = look_ahead.choose(firsts, held, worst, pair_budget)) best = *a;
    }
    look_ahead.runs().clear();
    next[prev[best]] = next[best];
    prev[next[best]] = prev[best];
    // The peak only grows: once it reaches `give_up_at` the rest of the run
    // cannot make the sequence one the caller keeps.
    const Simulation::Effect e = run.cascade(
        roots[best], false,
        [&](uint32_t t) {
          record(t);
          if (cache) cache->ran(t);
        },
        UINT64_MAX, int64_t{give_up_at} - held);
    worst = std::max(worst, held + e.peak);
    held += e.net;
    if (worst >= int64_t{give_up_at}) {
      max_held = give_up_at;
      return {};
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (prio[i] == UINT32_MAX) prio[i] = counter++;  // literals nobody reads
  }
  max_held = static_cast<uint32_t>(worst);
  return prio;
}

}  // namespace tessera::detail
