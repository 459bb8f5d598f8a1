// fuse and inline_functions: both replace a small subgraph by one task that
// runs its steps in order (composite_task), so they share that one mechanism.
#include "tessera/optimize/fuse.hpp"

#include <algorithm>
#include <memory>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>

#include "tessera/graph/compiled.hpp"
#include "tessera/optimize/graph_ops.hpp"

namespace tessera {
namespace {

// One step of a composite: a task and, per dependency, where its value comes
// from: >= 0 an input of the composite, < 0 the result of step (-s - 1).
struct Step {
  Task task;
  std::vector<int32_t> source;
};

// A task that runs `steps` (key and task, dependencies before readers; the
// last one gives the result) and reads only what the steps read from outside.
Task composite_task(std::string name, const std::vector<std::pair<Key, Task>>& steps) {
  absl::flat_hash_map<Key, int32_t> produced, inputs;
  std::vector<Arg> args;
  auto plan = std::make_shared<std::vector<Step>>();
  plan->reserve(steps.size());
  for (const auto& [key, task] : steps) {
    Step s{task, {}};
    for (const Key& d : task.dependencies()) {
      if (auto it = produced.find(d); it != produced.end()) {
        s.source.push_back(-it->second - 1);
        continue;
      }
      auto [it, added] = inputs.try_emplace(d, static_cast<int32_t>(args.size()));
      if (added) args.emplace_back(ref(d));
      s.source.push_back(it->second);
    }
    produced[key] = static_cast<int32_t>(plan->size());
    plan->push_back(std::move(s));
  }
  auto run = [plan = std::shared_ptr<const std::vector<Step>>(std::move(plan))](std::span<const Value> in) {
    std::vector<Value> results(plan->size());
    for (size_t i = 0; i < plan->size(); ++i) {
      const Step& s = (*plan)[i];
      results[i] = s.task.run([&](size_t j) -> const Value& {
        const int32_t src = s.source[j];
        return src >= 0 ? in[static_cast<size_t>(src)] : results[static_cast<size_t>(-src - 1)];
      });
    }
    return results.back();
  };
  return Task::from_args(fn(std::move(name), std::move(run)), std::move(args));
}

std::vector<uint8_t> marks(const Graph& g, std::span<const Key> keys) {
  std::vector<uint8_t> out(g.size(), 0);
  for (const Key& k : keys) {
    if (auto i = g.index_of(k)) out[*i] = 1;
  }
  return out;
}

}  // namespace

std::vector<uint32_t> fuse_targets(const Graph& g, const CompiledGraph& c, std::span<const Key> keys) {
  topological_order(g, c);  // refuse cycles before walking chains
  const uint32_t n = c.size();
  const std::vector<uint8_t> keep = marks(g, keys);
  std::vector<uint32_t> into(n, n);
  for (uint32_t i = 0; i < n; ++i) {
    if (!g.node(i).is_task() || keep[i] || c.dependents(i).size() != 1) continue;
    const uint32_t reader = c.dependents(i)[0];
    if (!g.node(reader).is_task() || c.dependencies(reader).size() != 1) continue;
    into[i] = reader;
  }
  return into;
}

std::vector<uint32_t> fuse_chain(const CompiledGraph& c, std::span<const uint32_t> into, uint32_t end) {
  // Walk up the chain from its end (each link is its reader's only dependency).
  std::vector<uint32_t> chain{end};
  for (bool more = true; more;) {
    more = false;
    for (uint32_t d : c.dependencies(chain.back())) {
      if (into[d] == chain.back()) {
        chain.push_back(d);
        more = true;
        break;
      }
    }
  }
  std::reverse(chain.begin(), chain.end());
  return chain;
}

Graph fuse(const Graph& g, std::span<const Key> keys) {
  const CompiledGraph c = compile(g);
  const uint32_t n = c.size();
  // into[i]: the reader that task i is fused into, or n.
  const std::vector<uint32_t> into = fuse_targets(g, c, keys);
  std::vector<uint8_t> has_link(n, 0);  // a task with a fused link above it
  for (uint32_t i = 0; i < n; ++i) {
    if (into[i] != n) has_link[into[i]] = 1;
  }
  Graph out;
  out.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (into[i] != n) continue;  // inside a chain
    if (!has_link[i]) {
      out.set(g.key(i), g.node(i));
      continue;
    }
    const std::vector<uint32_t> chain = fuse_chain(c, into, i);  // run top-down
    std::vector<std::pair<Key, Task>> steps;
    std::string name;
    for (uint32_t id : chain) {
      steps.emplace_back(g.key(id), g.node(id).task());
      if (!name.empty()) name += '+';
      name += g.node(id).task().function_name();
    }
    out.put(g.key(i), composite_task(std::move(name), steps));
  }
  return out;
}

Graph inline_functions(const Graph& g, std::span<const Key> outputs,
                       const std::vector<std::string>& fast_functions) {
  const CompiledGraph c = compile(g);
  const std::vector<uint32_t> topo = topological_order(g, c);
  const uint32_t n = c.size();
  const std::vector<uint8_t> keep = marks(g, outputs);
  const absl::flat_hash_set<std::string> fast(fast_functions.begin(), fast_functions.end());
  std::vector<uint8_t> inlined(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    inlined[i] = g.node(i).is_task() && !keep[i] && !c.dependents(i).empty() &&
                 fast.contains(g.node(i).task().function_name());
    // An alias names the stored value; a task read by one stays stored.
    for (uint32_t r : c.dependents(i)) inlined[i] &= g.node(r).is_task();
  }
  std::vector<uint32_t> position(n);
  for (uint32_t p = 0; p < n; ++p) position[topo[p]] = p;
  Graph out;
  out.reserve(n);
  std::vector<uint32_t> steps_ids, stack;
  std::vector<uint8_t> seen(n, 0);
  for (uint32_t i = 0; i < n; ++i) {
    if (inlined[i]) continue;
    // The inlined tasks this node reads, directly or through other inlined ones.
    steps_ids.clear();
    stack.assign(1, i);
    while (!stack.empty()) {
      const uint32_t t = stack.back();
      stack.pop_back();
      for (uint32_t d : c.dependencies(t)) {
        if (inlined[d] && !seen[d]) {
          seen[d] = 1;
          steps_ids.push_back(d);
          stack.push_back(d);
        }
      }
    }
    if (steps_ids.empty()) {
      out.set(g.key(i), g.node(i));
      continue;
    }
    std::sort(steps_ids.begin(), steps_ids.end(), [&](uint32_t a, uint32_t b) { return position[a] < position[b]; });
    std::vector<std::pair<Key, Task>> steps;
    for (uint32_t id : steps_ids) {
      seen[id] = 0;
      steps.emplace_back(g.key(id), g.node(id).task());
    }
    const Task& self = g.node(i).task();  // only tasks read inlined tasks (see above)
    steps.emplace_back(g.key(i), self);
    out.put(g.key(i), composite_task(self.function_name(), steps));
  }
  return out;
}

}  // namespace tessera
