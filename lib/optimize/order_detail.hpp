// Private pieces of order(): the graph as order sees it and the per-node
// statistics its tie-breaking key uses. Split from order.cpp so each file holds
// one idea: this one the preparation, order.cpp the traversal.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include <span>

#include "tessera/graph/compiled.hpp"
#include "tessera/graph/graph.hpp"

namespace tessera::detail {

//! A sorted set of node ids, shared by every node that has the same one; the
//! Connected that made it owns it. (A raw pointer: a graph of 10^5 roots
//! copied a shared count per node, each an atomic add and later a subtract.)
using IdSet = const std::vector<uint32_t>*;

//! The graph order() walks: the compiled graph without the literals that feed
//! several tasks (dask's "data roots": they are embedded in the tasks that read
//! them and get their priority just before the first of those).
struct OrderGraph {
  uint32_t n = 0;
  Csr deps, dents;
  std::vector<uint8_t> removed;         // a data root taken out of the graph
  std::vector<uint32_t> data_offsets;   // CSR: removed literals each node reads
  std::vector<uint32_t> data_ids;
};
OrderGraph make_order_graph(const Graph& g, const CompiledGraph& c);

//! For every node the number of roots it descends from (roots themselves
//! count none), and the largest number of dependents among those roots
//! (dask's `_connecting_to_roots`); the sets themselves are guaranteed only at
//! the sinks (nodes without `dents`), elsewhere they may be empty or null. With
//! `deps`/`dents` swapped it gives the leaves each node reaches.
struct Connected {
  std::vector<uint32_t> counts;
  std::vector<IdSet> sets;
  std::vector<uint32_t> max_dependents;
  //! The distinct sets `sets` points at.
  std::vector<std::unique_ptr<const std::vector<uint32_t>>> owned;
  IdSet own(std::vector<uint32_t> ids) {
    owned.push_back(std::make_unique<const std::vector<uint32_t>>(std::move(ids)));
    return owned.back().get();
  }
};
//! What a caller reads of Connected, so that the rest is not made: order()
//! reads every count and no set of the roots, and only the sinks' counts and
//! sets of the leaves. Without `sets`, no set is promised (any may be null);
//! without `all_counts`, counts are promised at the sinks only (others may be 0).
struct ConnectedWanted {
  bool sets = true;
  bool all_counts = true;
};
Connected connecting_to_roots(const OrderGraph& og, const Csr& deps, const Csr& dents, ConnectedWanted wanted = {});

//! Number of tasks that must run before each node, itself included, counting a
//! shared ancestor once per path (dask's `ndependencies`); saturates.
std::vector<uint64_t> total_dependencies(const OrderGraph& og);

//! A set of node ids below n with O(1) insert, erase and lookup, iterated in
//! no particular order (order() only ever takes the best of a set by its sort
//! key, whatever the order it meets them in). A hash set did the same with a
//! hash and a probe per operation, several per node run.
class DenseIdSet {
 public:
  explicit DenseIdSet(uint32_t n = 0) : pos_(n, kAbsent) {}
  bool contains(uint32_t x) const { return pos_[x] != kAbsent; }
  void insert(uint32_t x) {
    if (pos_[x] != kAbsent) return;
    pos_[x] = static_cast<uint32_t>(items_.size());
    items_.push_back(x);
  }
  void erase(uint32_t x) {
    const uint32_t p = pos_[x];
    if (p == kAbsent) return;
    const uint32_t last = items_.back();
    items_[p] = last;
    pos_[last] = p;
    items_.pop_back();
    pos_[x] = kAbsent;
  }
  size_t size() const { return items_.size(); }
  bool empty() const { return items_.empty(); }
  std::vector<uint32_t>::const_iterator begin() const { return items_.begin(); }
  std::vector<uint32_t>::const_iterator end() const { return items_.end(); }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  std::vector<uint32_t> items_;
  std::vector<uint32_t> pos_;  // per id: its index in items_
};

//! The leaves not yet reached, by the number of roots each still needs (dask's
//! `leafs_per_degree`): order() asks for those of the lowest degree, and a
//! root that runs moves every leaf it reaches one degree down. One bucket per
//! degree with swap-removal makes a move O(1); the lowest non-empty degree is
//! found by scanning up when its bucket empties, at most one step per earlier
//! move down in all, since leaves only ever move down.
class LeafDegrees {
 public:
  explicit LeafDegrees(uint32_t n = 0) : degree_(n, 0), pos_(n, kAbsent) {}
  //! Adds `leaf` at `degree` (it has none yet).
  void insert(uint32_t leaf, uint32_t degree) {
    degree_[leaf] = degree;
    if (buckets_.size() <= degree) buckets_.resize(size_t{degree} + 1);
    put(leaf, degree);
  }
  uint32_t degree(uint32_t leaf) const { return degree_[leaf]; }
  //! One root fewer for `leaf` (degree > 0); at degree 0 it leaves the set.
  void lower(uint32_t leaf) {
    const uint32_t d = degree_[leaf];
    take(leaf, d);
    degree_[leaf] = d - 1;
    if (d > 1) {
      // A bucket left empty lends its storage to the one below: the one result
      // of a reduction over 10^5 roots walks down 10^5 degrees, and would
      // otherwise allocate a bucket at each step (and free them all at the end).
      if (buckets_[d].empty() && buckets_[d - 1].capacity() == 0) buckets_[d].swap(buckets_[d - 1]);
      put(leaf, d - 1);
    }
    while (count_ > 0 && buckets_[lowest_].empty()) ++lowest_;
  }
  bool empty() const { return count_ == 0; }
  //! The leaves of the lowest degree; only when !empty().
  const std::vector<uint32_t>& lowest() const { return buckets_[lowest_]; }
  bool in_lowest(uint32_t x) const { return pos_[x] != kAbsent && degree_[x] == lowest_; }

 private:
  static constexpr uint32_t kAbsent = UINT32_MAX;
  void put(uint32_t leaf, uint32_t d) {
    pos_[leaf] = static_cast<uint32_t>(buckets_[d].size());
    buckets_[d].push_back(leaf);
    if (count_++ == 0 || d < lowest_) lowest_ = d;
  }
  void take(uint32_t leaf, uint32_t d) {
    std::vector<uint32_t>& b = buckets_[d];
    const uint32_t p = pos_[leaf], last = b.back();
    b[p] = last;
    pos_[last] = p;
    b.pop_back();
    pos_[leaf] = kAbsent;
    --count_;
  }
  std::vector<uint32_t> degree_, pos_;  // per node
  std::vector<std::vector<uint32_t>> buckets_;  // by degree
  uint32_t lowest_ = 0;  // the lowest non-empty bucket, when count_ > 0
  size_t count_ = 0;
};

}  // namespace tessera::detail
