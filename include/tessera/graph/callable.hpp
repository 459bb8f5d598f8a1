// tessera/graph/callable.hpp — calling a typed C++ function with evaluated Values.
//
// A task (tessera/graph/task.hpp) and an SPMD apply (tessera/spmd/view.hpp) both
// hold a user's function and call it later with a list of Values. This header is
// what they share: it deduces a callable's parameter types, wraps it as a RawFn
// that converts each Value with `Value::as<P>()` (a `Value` parameter takes it
// untyped, a `std::vector<T>` parameter takes a ValueList element-wise, a callable
// of `std::span<const Value>` gets all of them), and names it for messages.
//
// Naming. Messages say which function failed (`task w (add): ...`). A callable
// wrapped with `fn("add", add)`, or `TESSERA_FN(add)` which spells the same, carries
// its name and needs nothing else. Without it, a plain function is named from the
// dynamic symbol table (dladdr), which only knows functions of shared libraries and
// of executables linked with `-rdynamic` (others are named "function"); a lambda is
// named "lambda", any other callable by its type.
//
// @code
//   int add(int a, int b) { return a + b; }
//   tessera::RawFn raw = tessera::make_raw_fn(add, 2);
//   raw(values);                                  // add(values[0].as<int>(), values[1].as<int>())
//   g.task("w", TESSERA_FN(add), tessera::ref("z"), tessera::ref("y"));   // named "add"
// @endcode
//
// Thread-safe: naming may be called from any thread; a RawFn is as safe to call
// concurrently as the function it wraps.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include <span>

#include "tessera/graph/error.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

//! A callable with a name, for messages and profiles: `fn("inc", inc)`.
template <class F>
struct NamedFn {
  //! The name used in messages and profiles.
  std::string name;
  //! The callable.
  F f;
};
//! Names `f` without symbol lookup: `g.task("z", fn("inc", inc), ref("x"))`.
template <class F>
NamedFn<std::decay_t<F>> fn(std::string name, F&& f) {
  return {std::move(name), std::forward<F>(f)};
}

//! `TESSERA_FN(add)` is `tessera::fn("add", add)`: a function named by its spelling.
#define TESSERA_FN(f) ::tessera::fn(#f, f)

//! A type-erased function of evaluated arguments.
using RawFn = std::function<Value(std::span<const Value>)>;

//! Raised by a RawFn when an evaluated argument has the wrong type for the
//! function's parameter; the schedulers turn it into a TypeError naming the task.
class ArgumentTypeError : public TypeError {
 public:
  using TypeError::TypeError;
};

//! @cond
//! The result and decayed parameter types of a function, function pointer,
//! member function pointer or object with one non-template operator().
template <class F>
struct CallSignature : CallSignature<decltype(&F::operator())> {};
template <class R, class... P>
struct CallSignature<R (*)(P...)> {
  using result = R;
  using params = std::tuple<std::decay_t<P>...>;
};
template <class R, class... P>
struct CallSignature<R(P...)> : CallSignature<R (*)(P...)> {};
template <class R, class... P>
struct CallSignature<R (*)(P...) noexcept> : CallSignature<R (*)(P...)> {};
template <class C, class R, class... P>
struct CallSignature<R (C::*)(P...) const> : CallSignature<R (*)(P...)> {};
template <class C, class R, class... P>
struct CallSignature<R (C::*)(P...)> : CallSignature<R (*)(P...)> {};
template <class C, class R, class... P>
struct CallSignature<R (C::*)(P...) const noexcept> : CallSignature<R (*)(P...)> {};
template <class C, class R, class... P>
struct CallSignature<R (C::*)(P...) noexcept> : CallSignature<R (*)(P...)> {};
//! @endcond

namespace detail {

template <class F>
struct unnamed {
  using type = F;
};
template <class F>
struct unnamed<NamedFn<F>> {
  using type = F;
};

//! Whether F has one signature that CallSignature reads: a function, a pointer
//! to one, or a class with one non-template operator().
template <class F>
constexpr bool has_call_signature = std::is_function_v<std::remove_pointer_t<F>> || requires { &F::operator(); };

//! Whether F takes the evaluated arguments as one list: its parameter is
//! std::span<const Value> itself. Being invocable with a span is not enough: a
//! Value holds any object, a span too, so `Value f(Value)` must get its argument.
//! A generic lambda has no one signature and takes the list if it can.
template <class F>
consteval bool takes_argument_list() {
  if constexpr (has_call_signature<F>) {
    return std::is_same_v<typename CallSignature<F>::params, std::tuple<std::span<const Value>>>;
  } else {
    return std::is_invocable_v<F&, std::span<const Value>>;
  }
}

template <class F>
auto call_result_of() {
  if constexpr (takes_argument_list<F>()) {
    return std::type_identity<std::invoke_result_t<F&, std::span<const Value>>>{};
  } else {
    return std::type_identity<typename CallSignature<F>::result>{};
  }
}

}  // namespace detail

//! What a RawFn made from F returns before it is wrapped as a Value (void stays
//! void); F may be a NamedFn.
template <class F>
using call_result_t = typename decltype(detail::call_result_of<typename detail::unnamed<F>::type>())::type;

namespace detail {

//! The name of a plain function (dladdr) or of a callable type, worked out once
//! per function address or type and interned.
const std::string* callable_name(const void* function_address, const std::type_info& type);
[[noreturn]] void throw_argument_type(size_t position, const TypeError& e);
[[noreturn]] void throw_arity(size_t expected, size_t given);

template <class T>
struct is_std_vector : std::false_type {};
template <class T, class A>
struct is_std_vector<std::vector<T, A>> : std::true_type {};

// Converts one evaluated argument to parameter type P (decayed).
template <class P>
decltype(auto) convert_arg(const Value& v) {
  if constexpr (std::is_same_v<P, Value>) {
    return (v);
  } else if constexpr (is_std_vector<P>::value && !std::is_same_v<P, ValueList>) {
    if (v.is<ValueList>()) {
      P out;
      const auto& items = v.as<ValueList>();
      out.reserve(items.size());
      for (const Value& x : items) out.push_back(convert_arg<typename P::value_type>(x));
      return out;
    }
    return P(v.as<P>());
  } else {
    return v.as<P>();
  }
}

template <class R, class F, class... A>
Value call_and_wrap(F& f, A&&... a) {
  if constexpr (std::is_void_v<R>) {
    std::invoke(f, std::forward<A>(a)...);
    return Value();
  } else {
    return Value(std::invoke(f, std::forward<A>(a)...));
  }
}

template <class F, class Params, size_t... I>
Value invoke_typed(F& f, [[maybe_unused]] std::span<const Value> args, std::index_sequence<I...>) {
  using R = typename CallSignature<F>::result;
  [[maybe_unused]] auto convert = [&]<size_t J>(std::integral_constant<size_t, J>) -> decltype(auto) {
    try {
      return convert_arg<std::tuple_element_t<J, Params>>(args[J]);
    } catch (const TypeError& e) {
      throw_argument_type(J, e);
    }
  };
  return call_and_wrap<R>(f, convert(std::integral_constant<size_t, I>{})...);
}

}  // namespace detail

//! Wraps a callable (not a NamedFn) as a RawFn taking `arity` arguments. Throws
//! TypeError when f takes another number of arguments; the RawFn throws
//! ArgumentTypeError when an argument does not convert to its parameter's type.
template <class F>
RawFn make_raw_fn(F f, size_t arity) {
  if constexpr (detail::takes_argument_list<F>()) {
    using R = std::invoke_result_t<F&, std::span<const Value>>;
    return [f = std::move(f)](std::span<const Value> args) mutable -> Value {
      return detail::call_and_wrap<R>(f, args);
    };
  } else {
    using Params = typename CallSignature<F>::params;
    constexpr size_t n = std::tuple_size_v<Params>;
    if (arity != n) detail::throw_arity(n, arity);
    return [f = std::move(f)](std::span<const Value> args) mutable -> Value {
      return detail::invoke_typed<F, Params>(f, args, std::make_index_sequence<n>{});
    };
  }
}

//! The name of `f` for messages (see the file comment), interned: valid for the
//! life of the process, equal names share one pointer.
template <class F>
const std::string* callable_name(const F& f) {
  if constexpr (requires { f.name; f.f; }) {
    return detail::intern(f.name);
  } else if constexpr (std::is_pointer_v<F>) {
    return detail::callable_name(reinterpret_cast<const void*>(f), typeid(F));
  } else {
    // One name per type: worked out once, then no lock on the way (spmd names
    // every apply).
    static const std::string* const name = detail::callable_name(nullptr, typeid(F));
    return name;
  }
}

//! A callable ready to be called with evaluated arguments: its name and its RawFn.
struct Callable {
  //! The function's name.
  const std::string* name;
  //! Calls the function on evaluated arguments.
  RawFn fn;
};
//! Names `f` (a function, lambda, or `fn(name, f)`) and wraps it for `arity`
//! arguments; throws TypeError as make_raw_fn does.
template <class F>
Callable make_callable(F&& f, size_t arity) {
  using D = std::decay_t<F>;
  const std::string* name = callable_name<D>(f);
  if constexpr (requires { f.name; f.f; }) {
    return {name, make_raw_fn(std::forward<F>(f).f, arity)};
  } else {
    return {name, make_raw_fn(D(std::forward<F>(f)), arity)};
  }
}

}  // namespace tessera
