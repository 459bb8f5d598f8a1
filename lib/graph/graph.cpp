#include "tessera/graph/graph.hpp"

#include <absl/container/flat_hash_set.h>
#include <absl/hash/hash.h>

#include "tessera/graph/error.hpp"

namespace tessera {

namespace detail {
struct GraphIdHash {
  using is_transparent = void;
  const std::vector<Key>* keys;
  size_t operator()(uint32_t id) const { return absl::Hash<Key>{}((*keys)[id]); }
  size_t operator()(const Key& k) const { return absl::Hash<Key>{}(k); }
};
struct GraphIdEq {
  using is_transparent = void;
  const std::vector<Key>* keys;
  const Key& key(uint32_t id) const { return (*keys)[id]; }
  static const Key& key(const Key& k) { return k; }
  template <class A, class B>
  bool operator()(const A& a, const B& b) const { return key(a) == key(b); }
};
}  // namespace detail

struct Graph::Index : absl::flat_hash_set<uint32_t, detail::GraphIdHash, detail::GraphIdEq> {
  using flat_hash_set::flat_hash_set;
};

void Graph::IndexDeleter::operator()(Index* index) const { delete index; }

Graph::IndexPtr Graph::index_over(const KeyList* keys) {
  return IndexPtr(new Index(0, detail::GraphIdHash{keys}, detail::GraphIdEq{keys}));
}

bool Graph::contains(const Key& key) const { return index_->contains(key); }

Graph::Graph(const Graph& other)
    : keys_(std::make_unique<KeyList>(*other.keys_)), nodes_(other.nodes_), index_(index_over(keys_.get())) {
  index_->reserve(keys_->size());
  for (uint32_t i = 0; i < keys_->size(); ++i) index_->insert(i);
}

// The index moves with the keys it points at; `other` gets a fresh empty state.
Graph::Graph(Graph&& other) noexcept
    : keys_(std::exchange(other.keys_, std::make_unique<KeyList>())),
      nodes_(std::move(other.nodes_)),
      index_(std::exchange(other.index_, index_over(other.keys_.get()))) {
  other.nodes_.clear();
}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) *this = Graph(other);
  return *this;
}

Graph& Graph::operator=(Graph&& other) noexcept {
  if (this != &other) {
    keys_.swap(other.keys_);
    nodes_.swap(other.nodes_);
    index_.swap(other.index_);  // each index keeps pointing at the keys it came with
  }
  return *this;
}

void Graph::set(const Key& key, Node node) {
  bool inserted = false;
  auto it = index_->lazy_emplace(key, [&](const Index::constructor& make) {
    const auto id = static_cast<uint32_t>(keys_->size());
    keys_->push_back(key);
    nodes_.push_back(std::move(node));
    make(id);
    inserted = true;
  });
  if (!inserted) nodes_[*it] = std::move(node);
}

std::optional<uint32_t> Graph::index_of(const Key& key) const {
  auto it = index_->find(key);
  if (it == index_->end()) return std::nullopt;
  return *it;
}

const Node* Graph::find(const Key& key) const {
  auto it = index_->find(key);
  return it == index_->end() ? nullptr : &nodes_[*it];
}

const Node& Graph::at(const Key& key) const {
  if (const Node* n = find(key)) return *n;
  throw MissingKeyError(key, std::nullopt);
}

std::span<const Key> Graph::dependencies(uint32_t i) const {
  const Node& n = nodes_[i];
  switch (n.kind()) {
    case Node::Kind::task:
      return n.task().dependencies();
    case Node::Kind::alias:
      return std::span(&n.target(), 1);
    case Node::Kind::literal:
      break;
  }
  return {};
}

void Graph::reserve(size_t n) {
  keys_->reserve(n);
  nodes_.reserve(n);
  index_->reserve(n);
}

}  // namespace tessera
