// The registry of split_across.hpp and the rewrite over a graph.
#include "split_across.hpp"

#include <mutex>
#include <vector>

#include <absl/container/flat_hash_map.h>

namespace tessera::detail {
namespace {

struct Registry {
  std::mutex mutex;
  absl::flat_hash_map<std::string, SplitForRanks> splits;
};

Registry& registry() {
  static Registry r;
  return r;
}

}  // namespace

bool register_split_for_ranks(const std::string& function_name, SplitForRanks split) {
  Registry& r = registry();
  const std::lock_guard lock(r.mutex);
  r.splits[function_name] = split;
  return true;
}

std::optional<Graph> split_for_ranks(const Graph& g) {
  Registry& r = registry();
  absl::flat_hash_map<std::string, SplitForRanks> splits;
  {
    const std::lock_guard lock(r.mutex);
    splits = r.splits;
  }
  if (splits.empty()) return std::nullopt;
  std::vector<std::pair<uint32_t, SplitForRanks>> found;
  for (uint32_t i = 0; i < g.size(); ++i) {
    const Node& node = g.node(i);
    if (!node.is_task()) continue;
    const auto it = splits.find(node.task().function_name());
    if (it != splits.end()) found.emplace_back(i, it->second);
  }
  if (found.empty()) return std::nullopt;
  Graph out = g;
  for (const auto& [i, split] : found) split(g.key(i), g.node(i).task(), out);
  return out;
}

}  // namespace tessera::detail
