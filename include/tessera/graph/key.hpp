// tessera/graph/key.hpp — the name of a result in a task graph.
//
// A Key is what dask calls a key: a plain name (`x`) or a tuple of a name and
// integer indices (`('x', 0, 1)`), the form dask.array uses for blocks. Names are
// interned, so a Key is cheap to hash and compare for equality; copying one
// costs a relaxed atomic increment. An interned name is released when the last
// Key holding it goes, so a long-running process that keeps making fresh names
// (every `compute()`, `store()` and `map_blocks()` makes one) holds only the
// names of the keys still alive.
//
// Keys print as dask prints them and sort with dask's `sortkey` rule: names
// compare as strings, tuples element by element, and a string against a tuple by
// their printed forms. The order breaks ties predictably in `order` and the
// schedulers.
//
// @code
//   tessera::Key x("x");                     // prints  x
//   tessera::Key b("x", {0, 1});             // prints  ('x', 0, 1)
//   assert(b.name() == "x" && b.index()[1] == 1);
// @endcode
//
// Thread-safe: Keys are immutable; creating them from several threads is safe.
#pragma once

#include <atomic>
#include <compare>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>

#include <algorithm>
#include <cstddef>
#include <functional>
#include <span>

namespace tessera {

namespace detail {
//! One interned name: its text and the number of holders (Keys, plus one for a
//! name pinned by `intern`). Freed when the count reaches zero.
struct InternedName {
  explicit InternedName(std::string_view s) : text(s) {}
  const std::string text;
  mutable std::atomic<uint64_t> refs{1};
};
//! Drops one holder of `n`; the last one removes it from the table.
void release_name(const InternedName* n);

//! A Key's integer indices, set once: up to three inline (most keys of blocks
//! and of dask's graphs), more on the heap. What Abseil's InlinedVector gave Key,
//! with no Abseil type in the public header.
class KeyIndex {
 public:
  KeyIndex() = default;
  explicit KeyIndex(std::span<const int64_t> v) : size_(v.size()) {
    if (on_heap()) {
      s_.heap = copy_to_heap(v);
      return;
    }
    // Inline words one by one: std::copy would call memmove for every key.
    switch (size_) {
      case 3: s_.words[2] = v[2]; [[fallthrough]];
      case 2: s_.words[1] = v[1]; [[fallthrough]];
      case 1: s_.words[0] = v[0]; [[fallthrough]];
      default: break;
    }
  }
  //! Inline indices are copied as the whole union, with no call.
  KeyIndex(const KeyIndex& other) : size_(other.size_), s_(other.s_) {
    if (on_heap()) s_.heap = copy_to_heap(other.span());
  }
  KeyIndex(KeyIndex&& other) noexcept : size_(other.size_), s_(other.s_) { other.size_ = 0; }
  KeyIndex& operator=(const KeyIndex& other) {
    if (this != &other) *this = KeyIndex(other);
    return *this;
  }
  KeyIndex& operator=(KeyIndex&& other) noexcept {
    std::swap(size_, other.size_);
    std::swap(s_, other.s_);
    return *this;
  }
  ~KeyIndex() {
    if (on_heap()) delete[] s_.heap;
  }

  const int64_t* data() const { return on_heap() ? s_.heap : s_.words; }
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const int64_t* begin() const { return data(); }
  const int64_t* end() const { return data() + size_; }
  std::span<const int64_t> span() const { return {data(), size_}; }
  friend bool operator==(const KeyIndex& a, const KeyIndex& b) {
    if (a.size_ != b.size_) return false;
    // A loop, not std::equal: that calls memcmp, dearer than a key's few words.
    const int64_t *x = a.data(), *y = b.data();
    for (size_t i = 0; i < a.size_; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }

 private:
  static constexpr size_t kInline = 3;
  bool on_heap() const { return size_ > kInline; }
  static int64_t* copy_to_heap(std::span<const int64_t> v) {
    auto* d = new int64_t[v.size()];
    std::copy(v.begin(), v.end(), d);
    return d;
  }
  union Storage {  // trivially copyable: a move copies it whole
    int64_t words[kInline];
    int64_t* heap;
  };
  size_t size_ = 0;
  Storage s_{};
};
}  // namespace detail

//! A dask key: a name and zero or more integer indices, printed as dask prints them (`x`, `('x', 0, 1)`).
class Key {
 public:
  //! A plain string key, printed `x`.
  Key(std::string_view name);  // NOLINT(google-explicit-constructor): keys read like strings
  //! The key `name`.
  Key(const char* name) : Key(std::string_view(name)) {}  // NOLINT
  //! The key `name`.
  Key(const std::string& name) : Key(std::string_view(name)) {}  // NOLINT
  //! A tuple key `(name, i, j, ...)`; an empty index gives the 1-tuple `('x',)`.
  Key(std::string_view name, std::span<const int64_t> index);
  //! The tuple key `(name, index...)`.
  Key(std::string_view name, std::initializer_list<int64_t> index)
      : Key(name, std::span<const int64_t>(index.begin(), index.size())) {}

  //! Copies share the interned name.
  //! @{
  Key(const Key& other) : name_(other.name_), index_(other.index_), tuple_(other.tuple_) { acquire(); }
  Key(Key&& other) noexcept
      : name_(std::exchange(other.name_, nullptr)), index_(std::move(other.index_)), tuple_(other.tuple_) {}
  //! Copies `other`.
  //! @}
  Key& operator=(const Key& other) {
    if (this != &other) {
      other.acquire();
      release();
      name_ = other.name_;
      index_ = other.index_;
      tuple_ = other.tuple_;
    }
    return *this;
  }
  //! Moves `other` in.
  Key& operator=(Key&& other) noexcept {
    std::swap(name_, other.name_);
    index_ = std::move(other.index_);
    tuple_ = other.tuple_;
    return *this;
  }
  ~Key() { release(); }

  //! The name; empty for a moved-from Key.
  std::string_view name() const { return name_ != nullptr ? std::string_view(name_->text) : std::string_view(); }
  //! The integer indices (empty for a plain name).
  std::span<const int64_t> index() const { return index_.span(); }
  //! True for a tuple key, even `('x',)` with no index.
  bool is_tuple() const { return tuple_; }

  //! The key as dask prints it: `x` or `('x', 0, 1)`.
  std::string str() const;
  //! str() cut to at most `max` characters, for messages: a longer key ends
  //! in "... (N characters)", so an error never quotes a huge key whole.
  std::string brief(size_t max = 120) const;
  //! The key as JSON text, the form graph files use: `"x"` or `["x", 0, 1]`.
  std::string json() const;

  //! Same name, indices and tuple-ness.
  friend bool operator==(const Key& a, const Key& b) {
    return a.name_ == b.name_ && a.tuple_ == b.tuple_ && a.index_ == b.index_;
  }
  //! dask's sortkey order (see the file comment).
  friend std::strong_ordering operator<=>(const Key& a, const Key& b);

  //! A hash of the key (the one Abseil's tables use), for std::hash<Key>.
  size_t hash() const;

  //! Hashes for Abseil's containers.
  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(H::combine_contiguous(H::combine(std::move(h), k.name_, k.tuple_), k.index_.data(),
                                            k.index_.size()),
                      k.index_.size());
  }

 private:
  void acquire() const {
    if (name_ != nullptr) name_->refs.fetch_add(1, std::memory_order_relaxed);
  }
  void release() {
    if (name_ == nullptr) return;
    // Most releases are not the last: a CAS keeps them off the table's lock.
    uint64_t c = name_->refs.load(std::memory_order_relaxed);
    while (c > 1) {
      if (name_->refs.compare_exchange_weak(c, c - 1, std::memory_order_release, std::memory_order_relaxed)) return;
    }
    detail::release_name(name_);
  }

  const detail::InternedName* name_;  // interned: equal names share one pointer
  detail::KeyIndex index_;
  bool tuple_ = false;
};

std::ostream& operator<<(std::ostream& os, const Key& k);

namespace detail {
//! The one stored copy of `name`, pinned: equal names give the same pointer,
//! valid for the life of the process (task function names, a bounded set).
//! Keys share the table but hold their names only while they live.
const std::string* intern(std::string_view name);
//! How many names the table holds now (pinned ones and those of live Keys).
size_t interned_name_count();
}  // namespace detail

}  // namespace tessera

/// @cond
// Keys in standard unordered containers (hidden from the reference: Doxygen
// cannot place a specialization of std::hash).
template <>
struct std::hash<tessera::Key> {
  size_t operator()(const tessera::Key& k) const noexcept { return k.hash(); }
};
/// @endcond
