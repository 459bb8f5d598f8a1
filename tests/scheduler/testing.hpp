// Helpers of the scheduler tests: a payload that counts its instances, and
// random DAGs with an independent serial evaluation to check results against.
#pragma once

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <cstdint>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::testing {

//! A task result that counts live instances, and how often each task's result
//! (by `id`) was destroyed. Moved-from instances do not count as results.
struct Counted {
  static inline std::atomic<long> alive{0};
  static inline std::vector<int>* destroyed = nullptr;  // per id; set by a test

  int64_t id;
  uint64_t v;
  Counted(int64_t id_, uint64_t v_) : id(id_), v(v_) { ++alive; }
  Counted(Counted&& o) noexcept : id(o.id), v(o.v) {
    o.id = -1;
    ++alive;
  }
  Counted(const Counted&) = delete;
  ~Counted() {
    --alive;
    if (id >= 0 && destroyed) ++(*destroyed)[static_cast<size_t>(id)];
  }
  size_t nbytes() const { return 100 + static_cast<size_t>(id % 7); }
};

inline uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

//! A result of a chosen size that can spill: `data` is a pattern made from
//! `v`, so a result that came back damaged is detected where it is read.
struct Sized {
  uint64_t v;
  std::vector<uint64_t> data;
  static Sized make(uint64_t v, size_t words) {
    Sized s{v, std::vector<uint64_t>(words)};
    for (size_t k = 0; k < words; ++k) s.data[k] = mix(v, k);
    return s;
  }
  size_t nbytes() const { return data.size() * sizeof(uint64_t); }
  uint64_t checked() const {
    for (size_t k = 0; k < data.size(); ++k) {
      if (data[k] != mix(v, k)) throw std::runtime_error("a Sized result came back damaged");
    }
    return v;
  }
};

}  // namespace tessera::testing

template <>
struct tessera::Spillable<tessera::testing::Sized> {
  static void serialize(const testing::Sized& s, SpillWriter& w) {
    w.put(s.v);
    Spillable<std::vector<uint64_t>>::serialize(s.data, w);
  }
  static testing::Sized deserialize(SpillReader& r) {
    const auto v = r.get<uint64_t>();
    return {v, Spillable<std::vector<uint64_t>>::deserialize(r)};
  }
};

namespace tessera::testing {

//! The value a node's inputs give: literals are ints, results Counted or Sized.
inline uint64_t payload(const Value& v) {
  if (v.is<int>()) return static_cast<uint64_t>(v.as<int>());
  if (v.is<Sized>()) return v.as<Sized>().checked();
  return v.as<Counted>().v;
}

//! A random DAG: node i is a literal int or a task over earlier nodes whose
//! result is Counted{i, mix of inputs}; `fails[i]` tasks throw.
struct RandomDag {
  Graph graph;
  std::vector<std::vector<uint32_t>> deps;
  std::vector<bool> literal, fails;
  std::vector<uint64_t> expected;  // serial evaluation (for tasks that do not fail)
  Keys request = Keys(std::vector<Keys>{});
  std::vector<uint32_t> requested;
};

//! `words`, when given, makes results Sized (of words(i) 8-byte words) instead of Counted.
inline RandomDag random_dag(uint32_t seed, uint32_t n, double fail_rate,
                            std::function<size_t(uint32_t)> words = nullptr) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<double> u01(0, 1);
  RandomDag d;
  d.graph.reserve(n);
  d.deps.resize(n);
  d.literal.resize(n);
  d.fails.resize(n);
  d.expected.resize(n);
  std::vector<uint32_t> hubs;
  for (uint32_t i = 0; i < n; ++i) {
    Key key("n", {i});
    if (i == 0 || u01(rng) < 0.05) {
      d.literal[i] = true;
      d.expected[i] = i;
      d.graph.put(key, static_cast<int>(i));
      continue;
    }
    // Fan-in 1..6, mostly recent nodes, sometimes a hub (wide fan-out).
    uint32_t fan_in = 1 + static_cast<uint32_t>(std::min(5.0, -std::log(u01(rng) + 1e-12) * 1.2));
    std::vector<Arg> args;
    uint64_t h = i;
    for (uint32_t k = 0; k < fan_in; ++k) {
      uint32_t dep;
      if (!hubs.empty() && u01(rng) < 0.15) {
        dep = hubs[rng() % hubs.size()];
      } else {
        uint32_t back = 1 + static_cast<uint32_t>(rng() % std::min<uint32_t>(i, 40));
        dep = i - back;
      }
      d.deps[i].push_back(dep);
      args.emplace_back(ref(Key("n", {dep})));
      h = mix(h, d.expected[dep]);
    }
    if (u01(rng) < 0.01) hubs.push_back(i);
    d.expected[i] = h;
    d.fails[i] = u01(rng) < fail_rate;
    const bool fail = d.fails[i];
    const size_t size = words ? words(i) : 0;
    auto f = [i, fail, size](std::span<const Value> in) -> Value {
      if (fail) throw std::runtime_error("task " + std::to_string(i) + " fails on purpose");
      uint64_t x = i;
      for (const Value& v : in) x = mix(x, payload(v));
      if (size > 0) return Sized::make(x, size);
      return Value::make<Counted>(static_cast<int64_t>(i), x);
    };
    d.graph.put(key, Task::from_args(fn("combine", f), std::move(args)));
  }
  // Request a few keys in a nested shape, the last node among them.
  std::vector<Keys> groups;
  std::vector<Keys> group;
  uint32_t wanted = 1 + rng() % 12;
  for (uint32_t k = 0; k < wanted; ++k) {
    uint32_t i = k == 0 ? n - 1 : static_cast<uint32_t>(rng() % n);
    d.requested.push_back(i);
    group.emplace_back(Key("n", {i}));
    if (group.size() == 3 || k + 1 == wanted) {
      groups.emplace_back(std::move(group));
      group.clear();
    }
  }
  d.request = Keys(std::move(groups));
  return d;
}

//! The requested values of a Result, flattened.
inline void flatten_values(const Result& r, std::vector<uint64_t>& out) {
  if (!r.is_list()) {
    out.push_back(payload(r.value()));
    return;
  }
  for (const Result& item : r.items()) flatten_values(item, out);
}


// Bytes a task needs at once: its distinct task inputs and its result.
inline size_t most_needed(const Plan& plan, const std::vector<size_t>& bytes) {
  size_t most = 0;
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    std::vector<uint32_t> deps(plan.dependencies(t).begin(), plan.dependencies(t).end());
    std::sort(deps.begin(), deps.end());
    deps.erase(std::unique(deps.begin(), deps.end()), deps.end());
    size_t need = bytes[t];
    for (uint32_t d : deps) need += d < plan.num_tasks() ? bytes[d] : 0;
    most = std::max(most, need);
  }
  return most;
}

}  // namespace tessera::testing
