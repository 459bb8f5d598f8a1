// Test helper: the value of one key, computing what it needs depth-first. Only
// for checking that rewritten graphs compute the same values.
#pragma once

#include <absl/container/flat_hash_map.h>

#include "tessera/graph/graph.hpp"

namespace tessera::testing {

inline Value evaluate(const Graph& g, const Key& key, absl::flat_hash_map<Key, Value>& memo) {
  if (auto it = memo.find(key); it != memo.end()) return it->second;
  const Node& node = g.at(key);
  Value v;
  if (node.is_literal()) {
    v = node.literal();
  } else if (node.is_alias()) {
    v = evaluate(g, node.target(), memo);
  } else {
    std::vector<Value> deps;
    for (const Key& d : node.task().dependencies()) deps.push_back(evaluate(g, d, memo));
    v = node.task().run([&](size_t i) -> const Value& { return deps[i]; });
  }
  memo.emplace(key, v);
  return v;
}

inline Value evaluate(const Graph& g, const Key& key) {
  absl::flat_hash_map<Key, Value> memo;
  return evaluate(g, key, memo);
}

}  // namespace tessera::testing
