// Test helpers for the ports of dask's test_order.py: graphs written the way
// dask's tests write them, and the order of a key.
#pragma once

#include <doctest/doctest.h>

#include <initializer_list>
#include <string>
#include <vector>

#include "tessera/graph/compiled.hpp"
#include "tessera/optimize/order.hpp"

namespace tessera::testing {

inline int synthetic(std::span<const Value>) { return 0; }

//! A graph of tasks that only have structure.
struct Dsk {
  Graph g;
  //! `key: (f, deps...)`
  void task(const Key& key, std::vector<Key> deps = {}) {
    std::vector<Arg> args;
    for (Key& d : deps) args.emplace_back(ref(std::move(d)));
    g.put(key, Task::from_args(fn("f", synthetic), std::move(args)));
  }
  //! `key: 1` (data)
  void data(const Key& key) { g.put(key, Value(1)); }
};

//! order() of a graph, looked up by key; checks it is a topological order.
struct Ordered {
  const Graph& g;
  CompiledGraph c;
  std::vector<uint32_t> prio;
  explicit Ordered(const Graph& graph) : g(graph), c(compile(graph)), prio(order(graph, c)) {
    for (uint32_t i = 0; i < c.size(); ++i) {
      for (uint32_t d : c.dependencies(i)) CHECK(prio[d] < prio[i]);
    }
  }
  int64_t operator()(const Key& k) const { return prio[*g.index_of(k)]; }
  uint32_t pressure() const { return order_pressure(c, prio); }
};

//! dask's tests run with the names "abcde" and "edcba", so ties broken by
//! name go both ways.
inline const std::vector<std::string>& name_orders() {
  static const std::vector<std::string> v{"abcde", "edcba"};
  return v;
}
inline std::string s(char c) { return std::string(1, c); }

}  // namespace tessera::testing
