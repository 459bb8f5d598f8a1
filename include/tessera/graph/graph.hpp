// tessera/graph/graph.hpp — a task graph: key -> literal | task | alias.
//
// As in dask's graph spec, a graph maps each key to a literal value, a task, or
// an alias of another key. Building a graph never runs anything. Keys keep the
// order in which they were first put, so every algorithm over a graph is
// deterministic.
//
// @code
//   int inc(int x) { return x + 1; }
//   int add(int a, int b) { return a + b; }
//   tessera::Graph g;
//   g.put("x", 1);
//   g.put("y", 2);
//   g.task("z", inc, tessera::ref("x"));
//   g.task("w", add, tessera::ref("z"), tessera::ref("y"));
//   g.alias("result", "w");
// @endcode
//
// Thread-safe: concurrent reads are safe; writes need exclusive access.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/graph/key.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

//! What a key maps to.
class Node {
 public:
  //! Which of the three a node is.
  enum class Kind { literal, task, alias };

  //! A literal value.
  Node(Value literal) : v_(std::move(literal)) {}  // NOLINT(google-explicit-constructor)
  //! A task.
  Node(Task task) : v_(std::move(task)) {}         // NOLINT(google-explicit-constructor)
  //! An alias of `target`.
  static Node alias(Key target) { return Node(AliasOf{std::move(target)}); }

  //! Which of the three this is.
  Kind kind() const { return static_cast<Kind>(v_.index()); }
  //! True for a literal.
  bool is_literal() const { return kind() == Kind::literal; }
  //! True for a task.
  bool is_task() const { return kind() == Kind::task; }
  //! True for an alias.
  bool is_alias() const { return kind() == Kind::alias; }
  //! The literal; only for a literal.
  const Value& literal() const { return std::get<Value>(v_); }
  //! The task; only for a task.
  const Task& task() const { return std::get<Task>(v_); }
  //! The aliased key; only for an alias.
  const Key& target() const { return std::get<AliasOf>(v_).target; }

 private:
  struct AliasOf {
    Key target;
  };
  explicit Node(AliasOf a) : v_(std::move(a)) {}
  std::variant<Value, Task, AliasOf> v_;
};

//! A task graph, as dask's: key -> literal, task or alias. Building it runs nothing.
class Graph {
 public:
  Graph() = default;
  //! Copies share the keys (copy on write); moves leave `other` empty.
  //! @{
  Graph(const Graph& other);
  Graph(Graph&& other) noexcept;
  Graph& operator=(const Graph& other);
  Graph& operator=(Graph&& other) noexcept;
  //! @}
  ~Graph() = default;

  //! Maps `key` to a literal value (replacing what it mapped to before).
  void put(const Key& key, Value literal) { set(key, Node(std::move(literal))); }
  //! Maps `key` to a task.
  void put(const Key& key, Task task) { set(key, Node(std::move(task))); }
  //! Maps `key` to `f(args...)`; see task.hpp for what an argument can be.
  template <class F, class... A>
  void task(const Key& key, F&& f, A&&... args) {
    put(key, Task(std::forward<F>(f), std::forward<A>(args)...));
  }
  //! Makes `key` another name for `target`'s value.
  void alias(const Key& key, const Key& target) { set(key, Node::alias(target)); }
  //! Maps `key` to `node`.
  void set(const Key& key, Node node);

  //! Number of keys.
  size_t size() const { return keys_->size(); }
  //! True when there are no keys.
  bool empty() const { return keys_->empty(); }
  //! True when `key` is in the graph.
  bool contains(const Key& key) const;
  //! Position of `key` in insertion order, if present.
  std::optional<uint32_t> index_of(const Key& key) const;
  //! The node of `key`, or nullptr.
  const Node* find(const Key& key) const;
  //! The node of `key`; throws MissingKeyError.
  const Node& at(const Key& key) const;

  //! Keys and nodes in insertion order; position i is the compiled id i.
  const std::vector<Key>& keys() const { return *keys_; }
  //! The key of id `i`.
  const Key& key(uint32_t i) const { return (*keys_)[i]; }
  //! The node of id `i`.
  const Node& node(uint32_t i) const { return nodes_[i]; }
  //! The keys that node i reads: a task's dependencies, an alias's target.
  std::span<const Key> dependencies(uint32_t i) const;

  //! Makes room for `n` keys.
  void reserve(size_t n);

 private:
  // The index holds ids, hashed and compared through the keys they name: a
  // table of 4-byte slots, no second copy of each Key (graph.cpp). The keys
  // live on the heap so the index's hasher may point at them across moves of
  // the Graph; the index does too, which keeps its type out of this header.
  using KeyList = std::vector<Key>;
  struct Index;
  struct IndexDeleter {
    void operator()(Index* index) const;
  };
  using IndexPtr = std::unique_ptr<Index, IndexDeleter>;
  static IndexPtr index_over(const KeyList* keys);

  std::unique_ptr<KeyList> keys_ = std::make_unique<KeyList>();
  std::vector<Node> nodes_;
  IndexPtr index_ = index_over(keys_.get());
};

}  // namespace tessera
