// tessera/graph/value.hpp — a task's result: type-erased, immutable, shared.
//
// A Value holds one object of any copyable or movable type behind a shared
// pointer, so passing it between tasks never copies the object. `as<T>()` gives
// the object back and throws TypeError naming the expected and the actual type.
// Each Value records its size in bytes once, at creation, through the
// customization point `nbytes`: a member `v.nbytes()`, or a free function
// `nbytes(const T&)` found by argument-dependent lookup, or else `sizeof(T)`.
// The schedulers' memory accounting adds these sizes up. It also records whether
// the type has a Spillable form (tessera/graph/spill.hpp), so that a run with a
// memory limit can move the value to disk and back.
//
// @code
//   tessera::Value v(std::vector<double>(1000));
//   v.nbytes();                                   // 8000
//   const auto& xs = v.as<std::vector<double>>();
//   v.as<int>();                                  // throws TypeError
// @endcode
//
// Thread-safe: a Value is immutable; copies may be used and destroyed from any thread.
#pragma once

#include <concepts>
#include <cstddef>
#include <memory>
#include <string>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tessera/graph/spill.hpp"

namespace tessera {

class Value;
//! A list of values: what a list argument of a task evaluates to.
using ValueList = std::vector<Value>;

//! Sizes of common types for memory accounting; extend with your own overload
//! (found by argument-dependent lookup) or a member `nbytes()`.
inline size_t nbytes(const std::string& s) { return sizeof(std::string) + s.capacity(); }
size_t nbytes(const ValueList& list);
template <class T>
size_t nbytes(const std::vector<T>& v);

namespace detail {

template <class T>
size_t nbytes_of(const T& v) {
  if constexpr (requires { { v.nbytes() } -> std::convertible_to<size_t>; }) {
    return v.nbytes();
  } else if constexpr (requires { { nbytes(v) } -> std::convertible_to<size_t>; }) {
    return nbytes(v);
  } else {
    return sizeof(T);
  }
}

//! The demangled name of a type, for messages.
std::string type_name(const std::type_info& t);
//! A type_info name demangled (itself when it cannot be).
std::string demangle(const char* name);

using Reload = Value (*)(SpillReader&);

template <class T>
Value reload_as(SpillReader& r);

//! Makes a Spillable type known to tessera::from_wire (tessera/graph/wire.hpp)
//! by its type_info name.
bool register_wire_type(const std::type_info& type, Reload reload);
//! Initialized when the program starts, in every process of it, for each T a
//! Value is made of: a receiver knows the type before any message arrives.
template <class T>
inline const bool wire_registered = register_wire_type(typeid(T), &reload_as<T>);

struct HolderBase {
  virtual ~HolderBase() = default;
  virtual const std::type_info& type() const = 0;
  virtual void spill(SpillWriter& w) const = 0;
  size_t nbytes = 0;
  Reload reload = nullptr;  // null: the type has no Spillable form
};

template <class T>
struct Holder final : HolderBase {
  template <class... A>
  explicit Holder(A&&... a) : value(std::forward<A>(a)...) {
    nbytes = nbytes_of(value);
    if constexpr (spillable<T>) {
      reload = &reload_as<T>;
      static_cast<void>(wire_registered<T>);
    }
  }
  const std::type_info& type() const override { return typeid(T); }
  void spill(SpillWriter& w) const override {
    if constexpr (spillable<T>) Spillable<T>::serialize(value, w);
  }
  T value;
};

[[noreturn]] void throw_bad_cast(const std::type_info& expected, const HolderBase* actual);

}  // namespace detail

template <class T>
size_t nbytes(const std::vector<T>& v) {
  if constexpr (std::is_trivially_copyable_v<T>) {
    return sizeof(v) + v.size() * sizeof(T);
  } else {
    size_t total = sizeof(v);
    for (const T& x : v) total += detail::nbytes_of(x);
    return total;
  }
}

//! A type-erased, immutable, shared result; as<T>() gives it back, throwing TypeError on the wrong T.
class Value {
 public:
  //! An empty value (`has_value()` is false).
  Value() = default;

  //! Wraps `v` (copied or moved in).
  template <class T>
    requires(!std::same_as<std::remove_cvref_t<T>, Value>)
  Value(T&& v)  // NOLINT(google-explicit-constructor): tasks return plain objects
      : holder_(std::make_shared<const detail::Holder<std::remove_cvref_t<T>>>(std::forward<T>(v))) {}

  //! Builds a T in place.
  template <class T, class... A>
  static Value make(A&&... a) {
    Value v;
    v.holder_ = std::make_shared<const detail::Holder<T>>(std::forward<A>(a)...);
    return v;
  }

  //! False for an empty Value.
  bool has_value() const { return holder_ != nullptr; }
  //! True when this Value holds a T.
  template <class T>
  bool is() const {
    return holder_ && holder_->type() == typeid(T);
  }
  //! The held object; throws TypeError when it is not a T (or the Value is empty).
  template <class T>
  const T& as() const {
    if (!is<T>()) detail::throw_bad_cast(typeid(T), holder_.get());
    return static_cast<const detail::Holder<T>*>(holder_.get())->value;
  }
  //! The held type (typeid(void) when empty).
  const std::type_info& type() const { return holder_ ? holder_->type() : typeid(void); }
  //! The held type's demangled name, for messages.
  std::string type_name() const { return detail::type_name(type()); }
  //! Size in bytes as given by `nbytes` when the Value was made; 0 when empty.
  size_t nbytes() const { return holder_ ? holder_->nbytes : 0; }
  //! Makes the value again from what spill() wrote; null when its type has no
  //! Spillable form (or the Value is empty).
  detail::Reload reloader() const { return holder_ ? holder_->reload : nullptr; }
  //! Writes the object through its Spillable form; needs reloader() != nullptr.
  void spill(SpillWriter& w) const { holder_->spill(w); }
  //! How many Values share this object (for tests of release).
  long use_count() const { return holder_.use_count(); }
  //! True when both share one object.
  bool same_object(const Value& o) const { return holder_ == o.holder_; }

 private:
  std::shared_ptr<const detail::HolderBase> holder_;
};

template <class T>
Value detail::reload_as(SpillReader& r) {
  return Value::make<T>(Spillable<T>::deserialize(r));
}

}  // namespace tessera
