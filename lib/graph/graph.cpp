#include "tessera/graph/graph.hpp"

#include "tessera/graph/error.hpp"

namespace tessera {

void Graph::set(const Key& key, Node node) {
  auto [it, inserted] = index_.try_emplace(key, static_cast<uint32_t>(keys_.size()));
  if (inserted) {
    keys_.push_back(key);
    nodes_.push_back(std::move(node));
  } else {
    nodes_[it->second] = std::move(node);
  }
}

std::optional<uint32_t> Graph::index_of(const Key& key) const {
  auto it = index_.find(key);
  if (it == index_.end()) return std::nullopt;
  return it->second;
}

const Node* Graph::find(const Key& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? nullptr : &nodes_[it->second];
}

const Node& Graph::at(const Key& key) const {
  if (const Node* n = find(key)) return *n;
  throw MissingKeyError(key, std::nullopt);
}

absl::Span<const Key> Graph::dependencies(uint32_t i) const {
  const Node& n = nodes_[i];
  switch (n.kind()) {
    case Node::Kind::task:
      return n.task().dependencies();
    case Node::Kind::alias:
      return absl::MakeConstSpan(&n.target(), 1);
    case Node::Kind::literal:
      break;
  }
  return {};
}

void Graph::reserve(size_t n) {
  keys_.reserve(n);
  nodes_.reserve(n);
  index_.reserve(n);
}

}  // namespace tessera
