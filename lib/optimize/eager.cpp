// The single-worker model order() evaluates orders with; see eager.hpp.
#include "eager.hpp"

#include <algorithm>
#include <limits>
#include <tuple>

namespace tessera::detail {

EagerGraph::EagerGraph(const Graph& g, const CompiledGraph& cg, absl::Span<const Key> outputs) : c(&cg) {
  const uint32_t n = cg.size();
  literal.assign(n, 0);
  counted.assign(n, 0);
  kept.assign(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    literal[i] = g.node(i).is_literal();
    counted[i] = g.node(i).is_task();
  }
  for (const Key& k : outputs) {
    if (auto i = g.index_of(k)) kept[*i] = 1;
  }
}

namespace {

// The run state, with an undo log so a root's effect can be tried and taken back.
class Run {
 public:
  Run(const EagerGraph& eg, absl::Span<const uint32_t> rank) : eg_(eg), c_(*eg.c), rank_(rank) {
    const uint32_t n = c_.size();
    waiting_.assign(n, 0);
    readers_left_.assign(n, 0);
    for (uint32_t i = 0; i < n; ++i) {
      readers_left_[i] = static_cast<uint32_t>(c_.dependents(i).size());
      if (eg_.literal[i]) continue;
      for (uint32_t d : c_.dependencies(i)) waiting_[i] += !eg_.literal[d];
    }
  }

  //! Tasks ready at the start, best rank last (the top of the stack).
  std::vector<uint32_t> initial_ready() const {
    std::vector<uint32_t> ready;
    for (uint32_t i = 0; i < c_.size(); ++i) {
      if (!eg_.literal[i] && waiting_[i] == 0) ready.push_back(i);
    }
    sort_worst_first(ready, 0);
    return ready;
  }

  struct Effect {
    int64_t net = 0;   // results held after, minus before
    int64_t peak = 0;  // largest rise on the way
    uint32_t ran = 0;  // tasks run
  };

  //! Runs `root` and then, last-ready first, everything that becomes ready.
  //! `record` gets each task run; `trial` keeps an undo log.
  template <class F>
  Effect cascade(uint32_t root, bool trial, F&& record) {
    Effect e;
    stack_.assign(1, root);
    while (!stack_.empty()) {
      const uint32_t t = stack_.back();
      stack_.pop_back();
      record(t);
      ++e.ran;
      e.net += eg_.counted[t];
      const size_t from = stack_.size();
      for (uint32_t d : c_.dependents(t)) {
        if (trial) log_.emplace_back(&waiting_[d]);
        if (--waiting_[d] == 0) stack_.push_back(d);
      }
      sort_worst_first(stack_, from);
      for (uint32_t d : c_.dependencies(t)) {
        if (trial) log_.emplace_back(&readers_left_[d]);
        if (--readers_left_[d] == 0 && eg_.counted[d] && !eg_.kept[d]) --e.net;
      }
      e.peak = std::max(e.peak, e.net);
    }
    return e;
  }

  void undo() {
    for (auto it = log_.rbegin(); it != log_.rend(); ++it) ++**it;
    log_.clear();
  }

  void sort_worst_first(std::vector<uint32_t>& v, size_t from) const {
    std::sort(v.begin() + static_cast<std::ptrdiff_t>(from), v.end(),
              [this](uint32_t a, uint32_t b) { return rank_[a] > rank_[b]; });
  }

 private:
  const EagerGraph& eg_;
  const CompiledGraph& c_;
  absl::Span<const uint32_t> rank_;
  std::vector<uint32_t> waiting_, readers_left_, stack_;
  std::vector<uint32_t*> log_;
};

}  // namespace

uint32_t eager_max_held(const EagerGraph& eg, absl::Span<const uint32_t> priorities) {
  Run run(eg, priorities);
  std::vector<uint32_t> roots = run.initial_ready();
  int64_t held = 0, worst = 0;
  // Roots are only ever on the stack below everything a completion pushes, so
  // running them one cascade at a time, best first, is the LIFO run.
  for (auto it = roots.rbegin(); it != roots.rend(); ++it) {
    // Track the peak inside the cascade, relative to what was held before.
    Run::Effect e = run.cascade(*it, false, [](uint32_t) {});
    worst = std::max(worst, held + e.peak);
    held += e.net;
  }
  return static_cast<uint32_t>(worst);
}

std::vector<uint32_t> eager_sequence(const EagerGraph& eg, absl::Span<const uint32_t> base,
                                     RootChoice choice, uint32_t candidates) {
  const CompiledGraph& c = *eg.c;
  const uint32_t n = c.size();
  Run run(eg, base);
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
  auto record = [&](uint32_t t) {
    for (uint32_t d : c.dependencies(t)) {
      if (eg.literal[d] && prio[d] == UINT32_MAX) prio[d] = counter++;
    }
    prio[t] = counter++;
  };
  auto score = [&](const Run::Effect& e) {
    if (choice == RootChoice::least_growth) return std::tuple<double, double>(double(e.net), double(e.peak));
    return std::tuple<double, double>(double(e.net) / double(e.ran), double(e.peak));
  };
  while (next[nr] != nr) {
    uint32_t best = next[nr];
    std::tuple<double, double> best_score{};
    uint32_t seen = 0;
    for (uint32_t i = next[nr]; i != nr && seen < candidates; i = next[i], ++seen) {
      if (candidates == 1) break;
      const auto s = score(run.cascade(roots[i], true, [](uint32_t) {}));
      run.undo();
      if (seen == 0 || s < best_score) {
        best = i;
        best_score = s;
      }
    }
    next[prev[best]] = next[best];
    prev[next[best]] = prev[best];
    run.cascade(roots[best], false, record);
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (prio[i] == UINT32_MAX) prio[i] = counter++;  // literals nobody reads
  }
  return prio;
}

}  // namespace tessera::detail
