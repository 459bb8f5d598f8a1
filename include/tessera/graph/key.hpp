// tessera/graph/key.hpp — the name of a result in a task graph.
//
// A Key is what dask calls a key: a plain name (`x`) or a tuple of a name and
// integer indices (`('x', 0, 1)`), the form dask.array uses for blocks. Names are
// interned, so a Key is cheap to copy, hash and compare for equality.
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

#include <compare>
#include <cstdint>
#include <initializer_list>
#include <ostream>
#include <string>
#include <string_view>

#include <absl/container/inlined_vector.h>
#include <absl/types/span.h>

namespace tessera {

class Key {
 public:
  //! A plain string key, printed `x`.
  Key(std::string_view name);  // NOLINT(google-explicit-constructor): keys read like strings
  Key(const char* name) : Key(std::string_view(name)) {}  // NOLINT
  Key(const std::string& name) : Key(std::string_view(name)) {}  // NOLINT
  //! A tuple key `(name, i, j, ...)`; an empty index gives the 1-tuple `('x',)`.
  Key(std::string_view name, absl::Span<const int64_t> index);
  Key(std::string_view name, std::initializer_list<int64_t> index)
      : Key(name, absl::Span<const int64_t>(index.begin(), index.size())) {}

  std::string_view name() const { return *name_; }
  absl::Span<const int64_t> index() const { return index_; }
  bool is_tuple() const { return tuple_; }

  //! The key as dask prints it: `x` or `('x', 0, 1)`.
  std::string str() const;
  //! str() cut to at most `max` characters, for messages: a longer key ends
  //! in "... (N characters)", so an error never quotes a huge key whole.
  std::string brief(size_t max = 120) const;
  //! The key as JSON text, the form graph files use: `"x"` or `["x", 0, 1]`.
  std::string json() const;

  friend bool operator==(const Key& a, const Key& b) {
    return a.name_ == b.name_ && a.tuple_ == b.tuple_ && a.index_ == b.index_;
  }
  //! dask's sortkey order (see the file comment).
  friend std::strong_ordering operator<=>(const Key& a, const Key& b);

  template <typename H>
  friend H AbslHashValue(H h, const Key& k) {
    return H::combine(std::move(h), k.name_, k.tuple_, k.index_);
  }

 private:
  const std::string* name_;  // interned: equal names share one pointer
  absl::InlinedVector<int64_t, 3> index_;
  bool tuple_ = false;
};

std::ostream& operator<<(std::ostream& os, const Key& k);

namespace detail {
//! The one stored copy of `name`; equal names give the same pointer, valid for
//! the life of the process. Keys and task function names share this table.
const std::string* intern(std::string_view name);
}  // namespace detail

}  // namespace tessera
