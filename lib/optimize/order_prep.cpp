// Preparation for order(): which nodes order() sees, and the statistics of its
// sort key. See order_detail.hpp.
#include <algorithm>
#include <iterator>
#include <limits>

#include <absl/container/flat_hash_map.h>
#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>
#include <absl/types/span.h>

#include "order_detail.hpp"

namespace tessera::detail {

OrderGraph make_order_graph(const Graph& g, const CompiledGraph& c) {
  OrderGraph og;
  og.n = c.size();
  og.removed.assign(og.n, 0);
  // A literal read by several tasks is data embedded in those tasks, not
  // something to schedule; leaving it in would make it a root that ties
  // unrelated parts of the graph together.
  for (uint32_t i = 0; i < og.n; ++i) {
    og.removed[i] = g.node(i).is_literal() && c.dependencies(i).empty() && c.dependents(i).size() > 1;
  }
  og.deps.offsets.reserve(og.n + 1);
  og.deps.ids.reserve(c.num_edges());
  og.data_offsets.assign(og.n + 1, 0);
  for (uint32_t i = 0; i < og.n; ++i) {
    for (uint32_t d : c.dependencies(i)) {
      if (og.removed[d]) {
        og.data_ids.push_back(d);
      } else {
        og.deps.ids.push_back(d);
      }
    }
    og.deps.offsets.push_back(static_cast<uint32_t>(og.deps.ids.size()));
    og.data_offsets[i + 1] = static_cast<uint32_t>(og.data_ids.size());
  }
  og.dents.offsets.reserve(og.n + 1);
  og.dents.ids.reserve(og.deps.ids.size());
  for (uint32_t i = 0; i < og.n; ++i) {
    if (!og.removed[i]) {
      for (uint32_t d : c.dependents(i)) og.dents.ids.push_back(d);
    }
    og.dents.offsets.push_back(static_cast<uint32_t>(og.dents.ids.size()));
  }
  return og;
}

namespace {

// Sets are shared by content: the table holds each distinct set once and is
// looked up with the contents of a new union, so a union is not copied to be
// a key as well as kept as a set.
struct SetHash {
  using is_transparent = void;
  size_t operator()(absl::Span<const uint32_t> v) const { return absl::HashOf(v); }
  size_t operator()(const IdSet& s) const { return (*this)(absl::MakeConstSpan(*s)); }
};
struct SetEq {
  using is_transparent = void;
  static absl::Span<const uint32_t> span(absl::Span<const uint32_t> v) { return v; }
  static absl::Span<const uint32_t> span(const IdSet& s) { return absl::MakeConstSpan(*s); }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const {
    return span(a) == span(b);
  }
};
using SetTable = absl::flat_hash_set<IdSet, SetHash, SetEq>;

// The union of the children's sets, sharing an existing set whenever the
// union equals one (dense graphs end up with a handful of distinct sets).
IdSet merge_sets(absl::Span<const IdSet> parts, SetTable& dedup, Connected& out) {
  const IdSet& first = parts[0];
  bool all_in_first = true;
  for (size_t i = 1; i < parts.size() && all_in_first; ++i) {
    all_in_first = std::includes(first->begin(), first->end(), parts[i]->begin(), parts[i]->end());
  }
  if (all_in_first) return first;
  std::vector<uint32_t> merged;
  if (parts.size() <= 4) {
    // The parts are sorted: merging them pairwise is linear in their sizes
    // (a sort of the concatenation cost a log factor more, and dominated the
    // preparation of wide stencils, whose sets grow a row at a time).
    std::vector<uint32_t> tmp;
    merged.reserve(first->size() + parts[1]->size());
    std::set_union(first->begin(), first->end(), parts[1]->begin(), parts[1]->end(), std::back_inserter(merged));
    for (size_t i = 2; i < parts.size(); ++i) {
      tmp.clear();
      tmp.reserve(merged.size() + parts[i]->size());
      std::set_union(merged.begin(), merged.end(), parts[i]->begin(), parts[i]->end(), std::back_inserter(tmp));
      merged.swap(tmp);
    }
  } else {
    for (const IdSet& p : parts) merged.insert(merged.end(), p->begin(), p->end());
    std::sort(merged.begin(), merged.end());
    merged.erase(std::unique(merged.begin(), merged.end()), merged.end());
  }
  if (auto it = dedup.find(absl::MakeConstSpan(merged)); it != dedup.end()) return *it;
  IdSet made = out.own(std::move(merged));
  dedup.insert(made);
  return made;
}

}  // namespace

namespace {

// Bits set in a row of words. Written out rather than __builtin_popcountll,
// which without -mpopcnt is a call into libgcc per word (it shows in order()'s
// profile on a wide stencil).
uint32_t count_bits(const uint64_t* row, size_t words) {
  uint32_t n = 0;
  for (size_t w = 0; w < words; ++w) {
    uint64_t x = row[w];
    x -= (x >> 1) & 0x5555555555555555ULL;
    x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
    x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
    n += static_cast<uint32_t>((x * 0x0101010101010101ULL) >> 56);
  }
  return n;
}

// Few roots: each node's set as a bitset over the roots, so a union is a few
// word ORs and a size a popcount. A wide stencil's sets grow by a row at a
// time, and merging them as sorted vectors dominated order() there.
//
// A node whose union adds nothing to its first input's set shares that row
// (rows are never written once made), and every set of all the roots is one
// row: a chain's nodes, and a stencil's once their sets hold every root (half
// of a wide one), then cost no row, no union and no popcount of their own, and
// their bits are never allocated or cleared.
bool connecting_by_bits(const OrderGraph& og, const Csr& deps, const Csr& dents, ConnectedWanted wanted,
                        Connected& out) {
  std::vector<uint32_t> roots, bit_of(og.n, 0);
  for (uint32_t i = 0; i < og.n; ++i) {
    if (og.removed[i] || !deps[i].empty()) continue;
    bit_of[i] = static_cast<uint32_t>(roots.size());
    roots.push_back(i);
  }
  const size_t words = (roots.size() + 63) / 64;
  if (words * og.n > (size_t{1} << 21)) return false;  // 16 MiB of bits at most
  std::vector<uint32_t> row_of(og.n), row_count;  // per node its row; per row its bits set
  std::vector<uint64_t> bits;
  bits.reserve(words * (og.n + 1));  // address space only: the rows made are touched
  auto row = [&](uint32_t r) { return bits.data() + words * r; };
  auto new_row = [&]() {
    row_count.push_back(0);
    bits.resize(bits.size() + words, 0);
    return static_cast<uint32_t>(row_count.size() - 1);
  };
  auto drop_last_row = [&]() {
    row_count.pop_back();
    bits.resize(bits.size() - words);
  };
  constexpr uint32_t kNoRow = UINT32_MAX;
  const uint32_t full = new_row();
  for (uint32_t b = 0; b < roots.size(); ++b) row(full)[b / 64] |= uint64_t{1} << (b % 64);
  row_count[full] = static_cast<uint32_t>(roots.size());
  std::vector<uint32_t> num_needed(og.n), stack;
  for (uint32_t i = 0; i < og.n; ++i) num_needed[i] = static_cast<uint32_t>(deps[i].size());
  for (uint32_t r : roots) {
    row_of[r] = roots.size() == 1 ? full : new_row();
    row(row_of[r])[bit_of[r] / 64] |= uint64_t{1} << (bit_of[r] % 64);
    row_count[row_of[r]] = 1;
    out.max_dependents[r] = static_cast<uint32_t>(dents[r].size());
    for (uint32_t child : dents[r]) {
      if (--num_needed[child] == 0) stack.push_back(child);
    }
  }
  while (!stack.empty()) {
    const uint32_t key = stack.back();
    stack.pop_back();
    for (uint32_t parent : dents[key]) {
      if (--num_needed[parent] == 0) stack.push_back(parent);
    }
    const auto inputs = deps[key];
    uint32_t max_dep = 0;
    for (uint32_t child : inputs) max_dep = std::max(max_dep, out.max_dependents[child]);
    out.max_dependents[key] = max_dep;
    // The union's row while it is an existing one: the first input's, or every
    // root's; otherwise it is made in a new row at the end of `bits`, dropped
    // again if it turns out to be one of those.
    uint32_t made = row_of[inputs[0]], fresh = kNoRow;
    bool grew = false;  // whether the fresh row holds more than `made`
    for (size_t k = 1; k < inputs.size() && made != full; ++k) {
      const uint32_t r = row_of[inputs[k]];
      if (r == made) continue;
      if (r == full) {
        made = full;
        break;
      }
      if (fresh == kNoRow) {
        fresh = new_row();
        std::copy(row(made), row(made) + words, row(fresh));
      }
      uint64_t* mine = row(fresh);
      const uint64_t* theirs = row(r);
      for (size_t w = 0; w < words; ++w) {
        const uint64_t x = mine[w] | theirs[w];
        grew = grew || x != mine[w];
        mine[w] = x;
      }
    }
    if (made != full && grew && !std::equal(row(fresh), row(fresh) + words, row(full))) {
      made = fresh;
      if (wanted.all_counts) row_count[made] = count_bits(row(made), words);
    } else if (fresh != kNoRow) {
      if (made != full && grew) made = full;
      drop_last_row();
    }
    row_of[key] = made;
    if (wanted.all_counts) out.counts[key] = row_count[row_of[key]];
  }
  if (!wanted.sets) return true;  // and the counts were taken everywhere
  // Sets are spelled out only at the sinks, sharing equal ones; a set is
  // looked up by its row of bits in place (the rows outlive the table), not
  // by a copy of the row made for each sink.
  absl::flat_hash_map<absl::Span<const uint64_t>, IdSet> dedup;
  const IdSet empty = out.own({});
  // Sinks side by side mostly share a set (the leaves of a reduction all
  // reach its one result): one comparison with the last sink's row spares
  // hashing each row.
  uint32_t last = UINT32_MAX;
  for (uint32_t i = 0; i < og.n; ++i) {
    if (og.removed[i] || !dents[i].empty() || deps[i].empty()) continue;
    const uint64_t* bits_i = row(row_of[i]);
    if (last != UINT32_MAX &&
        (row_of[i] == row_of[last] || std::equal(bits_i, bits_i + words, row(row_of[last])))) {
      out.counts[i] = out.counts[last];
      out.sets[i] = out.sets[last];
      continue;
    }
    last = i;
    if (!wanted.all_counts) out.counts[i] = count_bits(bits_i, words);
    auto [it, inserted] = dedup.try_emplace(absl::MakeConstSpan(bits_i, words), nullptr);
    if (inserted) {
      std::vector<uint32_t> ids;
      ids.reserve(out.counts[i]);
      for (size_t w = 0; w < words; ++w) {
        for (uint64_t b = bits_i[w]; b != 0; b &= b - 1) ids.push_back(roots[w * 64 + __builtin_ctzll(b)]);
      }
      it->second = out.own(std::move(ids));
    }
    out.sets[i] = it->second;
  }
  // Sets are promised at the sinks only: the others stay null.
  for (uint32_t i = 0; i < og.n; ++i) {
    if (!out.sets[i] && dents[i].empty()) out.sets[i] = empty;
  }
  return true;
}

}  // namespace

Connected connecting_to_roots(const OrderGraph& og, const Csr& deps, const Csr& dents, ConnectedWanted wanted) {
  Connected out;
  out.sets.resize(og.n);
  out.counts.assign(og.n, 0);
  out.max_dependents.assign(og.n, 0);
  if (!wanted.sets) wanted.all_counts = true;  // the sinks' counts come with their sets
  if (connecting_by_bits(og, deps, dents, wanted, out)) return out;
  std::vector<uint32_t> num_needed(og.n), stack, roots;
  for (uint32_t i = 0; i < og.n; ++i) num_needed[i] = static_cast<uint32_t>(deps[i].size());
  // A node all of whose inputs feed only it, and are roots or such nodes
  // themselves, sits on a tree: the roots under its inputs are disjoint, so its
  // count is their sum and its set is not built unless a node off the tree (or
  // the caller, at a sink) needs it. A tree reduction then costs linear time
  // instead of a union per node.
  std::vector<uint8_t> on_tree(og.n, 0);
  std::vector<uint32_t> tree_count(og.n, 0);
  for (uint32_t i = 0; i < og.n; ++i) {
    if (og.removed[i] || !deps[i].empty()) continue;
    roots.push_back(i);
    on_tree[i] = 1;
    tree_count[i] = 1;
    out.max_dependents[i] = static_cast<uint32_t>(dents[i].size());
    for (uint32_t child : dents[i]) {
      if (--num_needed[child] == 0) stack.push_back(child);
    }
  }
  // The roots under a tree node, gathered once (each tree node has one reader).
  std::vector<uint32_t> walk;
  auto set_of = [&](uint32_t i) -> const IdSet& {
    if (out.sets[i] || !on_tree[i]) return out.sets[i];
    std::vector<uint32_t> ids;
    ids.reserve(tree_count[i]);
    walk.assign(1, i);
    while (!walk.empty()) {
      const uint32_t u = walk.back();
      walk.pop_back();
      if (deps[u].empty()) ids.push_back(u);
      for (uint32_t c : deps[u]) walk.push_back(c);
    }
    std::sort(ids.begin(), ids.end());
    out.sets[i] = out.own(std::move(ids));
    return out.sets[i];
  };
  SetTable dedup;
  std::vector<IdSet> parts;
  absl::flat_hash_set<const std::vector<uint32_t>*> seen;
  while (!stack.empty()) {
    const uint32_t key = stack.back();
    stack.pop_back();
    for (uint32_t parent : dents[key]) {
      if (--num_needed[parent] == 0) stack.push_back(parent);
    }
    bool tree = true;
    for (uint32_t child : deps[key]) tree = tree && on_tree[child] && dents[child].size() == 1;
    uint32_t max_dep = 0;
    if (tree) {
      uint64_t count = 0;
      for (uint32_t child : deps[key]) {
        count += tree_count[child];
        max_dep = std::max(max_dep, out.max_dependents[child]);
      }
      on_tree[key] = 1;
      tree_count[key] = static_cast<uint32_t>(count);
      out.max_dependents[key] = max_dep;
      continue;
    }
    parts.clear();
    seen.clear();
    // Each distinct set once; a node with many inputs (a wide fan-in) looks
    // sets up by address, so it stays linear in its inputs.
    const bool wide = deps[key].size() > 16;
    for (uint32_t child : deps[key]) {
      const IdSet& s = set_of(child);
      const bool fresh = wide ? seen.insert(s).second : std::find(parts.begin(), parts.end(), s) == parts.end();
      if (fresh) {
        parts.push_back(s);
        max_dep = std::max(max_dep, out.max_dependents[child]);
      }
    }
    out.max_dependents[key] = max_dep;
    out.sets[key] = parts.size() == 1 ? parts[0] : merge_sets(parts, dedup, out);
  }
  const IdSet empty = out.own({});
  for (uint32_t i = 0; i < og.n; ++i) {
    if (og.removed[i] || deps[i].empty()) {
      if (wanted.sets) out.sets[i] = empty;  // roots count none; removed literals are no nodes
      continue;
    }
    if (on_tree[i]) {
      out.counts[i] = tree_count[i];
      // Sets are promised at the sinks only (a tree's is a walk of all of it).
      if (!wanted.sets) continue;
      if (dents[i].empty()) set_of(i);
      if (!out.sets[i]) out.sets[i] = empty;
      continue;
    }
    out.counts[i] = static_cast<uint32_t>(out.sets[i]->size());
  }
  return out;
}

std::vector<uint64_t> total_dependencies(const OrderGraph& og) {
  constexpr uint64_t cap = std::numeric_limits<uint64_t>::max() / 2;
  std::vector<uint64_t> total(og.n, 0);
  std::vector<uint32_t> num_needed(og.n), stack;
  for (uint32_t i = 0; i < og.n; ++i) {
    num_needed[i] = static_cast<uint32_t>(og.deps[i].size());
    if (num_needed[i] == 0 && !og.removed[i]) stack.push_back(i);
  }
  while (!stack.empty()) {
    const uint32_t key = stack.back();
    stack.pop_back();
    uint64_t t = 1;
    for (uint32_t child : og.deps[key]) t = std::min(cap, t + total[child]);
    total[key] = t;
    for (uint32_t parent : og.dents[key]) {
      if (--num_needed[parent] == 0) stack.push_back(parent);
    }
  }
  return total;
}

}  // namespace tessera::detail
