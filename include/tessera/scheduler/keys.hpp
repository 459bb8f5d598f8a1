// tessera/scheduler/keys.hpp — what a run is asked for, and what it gives back.
//
// dask's `get(dsk, keys)` takes a key, a list of keys or a list of lists, and
// answers in the same nested shape. `Keys` is that request and `Result` the
// answer: a single Value where one key was asked for, a list of Results where a
// list was.
//
// @code
//   tessera::Result r = tessera::get(g, {"z", {"w", "x"}});
//   int z = r[0].as<int>();
//   int w = r[1][0].as<int>();
//   int only = tessera::get(g, "w").as<int>();
// @endcode
//
// Thread-safe: both are immutable values once built.
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <variant>
#include <vector>

#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

//! A key, or a (nested) list of Keys.
class Keys {
 public:
  //! One key; the result is a single value.
  Keys(Key key) : v_(std::move(key)) {}  // NOLINT(google-explicit-constructor)
  //! One key, by its name.
  Keys(const char* name) : v_(Key(name)) {}  // NOLINT(google-explicit-constructor)
  //! One key, by its name.
  Keys(const std::string& name) : v_(Key(name)) {}  // NOLINT(google-explicit-constructor)
  //! A list: `{"x", "y"}`, `{{"a", "b"}, {"c"}}`; the result is a list of the same shape.
  Keys(std::initializer_list<Keys> items) : v_(std::vector<Keys>(items)) {}
  //! A list built at run time.
  Keys(std::vector<Keys> items) : v_(std::move(items)) {}  // NOLINT(google-explicit-constructor)
  //! A flat list of keys; the result is a list of values.
  Keys(const std::vector<Key>& keys);  // NOLINT(google-explicit-constructor)

  //! True for one key, false for a list.
  bool is_key() const { return v_.index() == 0; }
  //! The key; only when is_key().
  const Key& key() const { return std::get<Key>(v_); }
  //! The list's items; only when !is_key().
  const std::vector<Keys>& items() const { return std::get<std::vector<Keys>>(v_); }
  //! Every key, depth first, in the order they appear.
  std::vector<Key> flatten() const;

 private:
  std::variant<Key, std::vector<Keys>> v_;
};

//! A run's answer, shaped like the Keys that asked for it.
class Result {
 public:
  //! A single value.
  explicit Result(Value v) : v_(std::move(v)) {}
  //! A list of results.
  explicit Result(std::vector<Result> items) : v_(std::move(items)) {}

  //! True for a list, false for one value.
  bool is_list() const { return v_.index() == 1; }
  //! The value; throws TypeError when this is a list.
  const Value& value() const;
  //! The value as a T; throws TypeError when it is a list or holds another type.
  template <class T>
  const T& as() const {
    return value().as<T>();
  }
  //! Number of items of a list; throws TypeError for a single value.
  size_t size() const { return items().size(); }
  //! Item i of a list; throws TypeError for a single value.
  const Result& operator[](size_t i) const { return items().at(i); }
  //! The items of a list; throws TypeError for a single value.
  const std::vector<Result>& items() const;

 private:
  std::variant<Value, std::vector<Result>> v_;
};

}  // namespace tessera
