// `tessera graph dot`: labels as dask's visualize gives them (key_split of the
// name, without its token, plus the indices: `random_sample (0, 1)`), the
// function and order's priority; fill colour by order's priority (blue runs
// first, red last) or by the bytes of the result (white none, red the most).
//
// Graphviz lays a graph out in ranks, and a rank as wide as the widest layer of
// the graph makes pictures tens of thousands of pixels wide (400 blocks side by
// side). So a graph with more than kMaxNodes nodes, or with more than
// kMaxLayer nodes at one depth, is drawn collapsed: a node stands for all the
// tasks of one key group (key_split) at one depth (the longest chain of
// dependencies from a root), labelled with the group, the number of tasks and
// the depth; an edge stands for every edge between the two sets, with their
// count. The picture says so in its label.
#include "graph_dot.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "command.hpp"
#include "human.hpp"
#include "tessera/graph/key_split.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"

namespace tessera::tool {
namespace {

constexpr uint32_t kMaxNodes = 2000;  // drawn one by one up to here
constexpr uint32_t kMaxLayer = 16;    // nodes at one depth: about 3,000 pt of boxes side by side

//! `s` as the inside of a DOT double-quoted string.
std::string dot_escape(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  return out;
}

//! The longest chain of dependencies from a root to each node (roots: 0).
std::vector<uint32_t> depths(const GraphFile& f) {
  const CompiledGraph& c = f.compiled;
  std::vector<uint32_t> depth(c.size(), 0);
  for (uint32_t i : topological_order(f.graph, c)) {
    for (uint32_t d : c.dependencies(i)) depth[i] = std::max(depth[i], depth[d] + 1);
  }
  return depth;
}

//! A fill colour: hue from blue (0) to red (1) for order; white to red for memory.
std::string fill(DotColor color, double x) {
  char buf[32];
  if (color == DotColor::order) {
    std::snprintf(buf, sizeof buf, "%.3f 0.45 1.000", 0.667 * (1.0 - x));
  } else {
    std::snprintf(buf, sizeof buf, "0.000 %.3f 1.000", 0.05 + 0.75 * x);
  }
  return buf;
}

//! Bytes on a log scale in [0, 1] against the largest.
double memory_scale(uint64_t bytes, uint64_t largest) {
  return largest == 0 ? 0.0 : std::log1p(static_cast<double>(bytes)) / std::log1p(static_cast<double>(largest));
}

void write_nodes(const GraphFile& f, const std::vector<uint32_t>& prio, DotColor color, std::FILE* out) {
  const CompiledGraph& c = f.compiled;
  const double last = std::max<double>(1.0, c.size() - 1.0);
  const uint64_t largest = f.nbytes.empty() ? 0 : *std::max_element(f.nbytes.begin(), f.nbytes.end());
  for (uint32_t i = 0; i < c.size(); ++i) {
    const Node& n = f.graph.node(i);
    const std::string func = n.is_task() ? n.task().function_name() : "literal";
    const double x = color == DotColor::order ? prio[i] / last : memory_scale(f.nbytes[i], largest);
    std::fprintf(out, "  n%u [label=\"%s\\n%s #%u\", fillcolor=\"%s\"];\n", i,
                 dot_escape(key_label(f.graph.key(i))).c_str(), dot_escape(func).c_str(), prio[i],
                 fill(color, x).c_str());
  }
  for (uint32_t i = 0; i < c.size(); ++i) {
    for (uint32_t d : c.dependencies(i)) std::fprintf(out, "  n%u -> n%u;\n", d, i);
  }
}

void write_collapsed(const GraphFile& f, const std::vector<uint32_t>& prio, const std::vector<uint32_t>& depth,
                     DotColor color, std::FILE* out) {
  const CompiledGraph& c = f.compiled;
  struct Set {
    std::string group;
    uint32_t depth = 0;
    uint64_t tasks = 0, bytes = 0;
    double priority = 0;  // sum, then mean
  };
  std::vector<Set> sets;
  std::vector<uint32_t> set_of(c.size());
  absl::flat_hash_map<std::string, uint32_t> group_id;  // key_split once per name
  absl::flat_hash_map<uint64_t, uint32_t> by_group_depth;
  for (uint32_t i = 0; i < c.size(); ++i) {
    const std::string name(f.graph.key(i).name());
    auto [g, fresh] = group_id.try_emplace(name, 0);
    if (fresh) g->second = static_cast<uint32_t>(group_id.size() - 1);
    const uint64_t id = (uint64_t{g->second} << 32) | depth[i];
    auto [s, added] = by_group_depth.try_emplace(id, static_cast<uint32_t>(sets.size()));
    if (added) sets.push_back({key_split(name), depth[i]});
    Set& set = sets[s->second];
    set_of[i] = s->second;
    set.tasks += 1;
    set.bytes += f.nbytes[i];
    set.priority += prio[i];
  }
  // key_split may give several names one group: merge their sets at each depth.
  absl::flat_hash_map<std::string, uint32_t> merged;
  std::vector<uint32_t> into(sets.size());
  std::vector<Set> kept;
  for (uint32_t s = 0; s < sets.size(); ++s) {
    auto [it, fresh] = merged.try_emplace(sets[s].group + "\n" + std::to_string(sets[s].depth),
                                          static_cast<uint32_t>(kept.size()));
    if (fresh) {
      kept.push_back(sets[s]);
    } else {
      Set& k = kept[it->second];
      k.tasks += sets[s].tasks;
      k.bytes += sets[s].bytes;
      k.priority += sets[s].priority;
    }
    into[s] = it->second;
  }
  const double last = std::max<double>(1.0, c.size() - 1.0);
  uint64_t largest = 0;
  for (const Set& s : kept) largest = std::max(largest, s.bytes);
  std::fprintf(out,
               "  label=\"%u tasks, collapsed: a node is the tasks of one key group at one depth\\n"
               "(the longest chain from a root); an edge label, the edges between two nodes\";\n  labelloc=t;\n",
               c.size());
  for (uint32_t s = 0; s < kept.size(); ++s) {
    const Set& k = kept[s];
    const double mean = k.priority / static_cast<double>(k.tasks);
    const double x = color == DotColor::order ? mean / last : memory_scale(k.bytes, largest);
    std::fprintf(out, "  s%u [label=\"%s\\n%llu task%s, depth %u\\n%s\", fillcolor=\"%s\"];\n", s,
                 dot_escape(k.group).c_str(), static_cast<unsigned long long>(k.tasks), k.tasks == 1 ? "" : "s",
                 k.depth, human(static_cast<double>(k.bytes)).c_str(), fill(color, x).c_str());
  }
  std::vector<uint64_t> edges;
  for (uint32_t i = 0; i < c.size(); ++i) {
    for (uint32_t d : c.dependencies(i)) edges.push_back((uint64_t{into[set_of[d]]} << 32) | into[set_of[i]]);
  }
  std::sort(edges.begin(), edges.end());
  for (size_t a = 0; a < edges.size();) {
    size_t b = a;
    while (b < edges.size() && edges[b] == edges[a]) ++b;
    std::fprintf(out, "  s%u -> s%u [label=\"%zu\"];\n", static_cast<uint32_t>(edges[a] >> 32),
                 static_cast<uint32_t>(edges[a] & 0xffffffffu), b - a);
    a = b;
  }
}

}  // namespace

DotColor parse_dot_color(const std::string& text) {
  if (text == "order") return DotColor::order;
  if (text == "memory") return DotColor::memory;
  throw UsageError("--color expects order or memory, got '" + text + "'");
}

void write_dot(const GraphFile& f, DotColor color, std::FILE* out) {
  const std::vector<uint32_t> prio = order(f.graph, f.compiled);
  const std::vector<uint32_t> depth = depths(f);
  std::vector<uint32_t> per_depth;
  for (uint32_t d : depth) {
    if (d >= per_depth.size()) per_depth.resize(d + 1, 0);
    ++per_depth[d];
  }
  const uint32_t widest = per_depth.empty() ? 0 : *std::max_element(per_depth.begin(), per_depth.end());
  std::fprintf(out, "digraph \"%s\" {\n", dot_escape(f.name).c_str());
  std::fprintf(out, "  node [shape=box, style=\"rounded,filled\", fontname=\"Helvetica\"];\n");
  if (f.compiled.size() > kMaxNodes || widest > kMaxLayer) {
    write_collapsed(f, prio, depth, color, out);
  } else {
    write_nodes(f, prio, color, out);
  }
  std::fprintf(out, "}\n");
}

}  // namespace tessera::tool
