// tessera/delayed/delayed.hpp — lazy function calls whose keys tessera makes, as dask.delayed.
//
// C++ analytics code should not have to invent a key for every task. `delayed(f)(args...)`
// records the call `f(args...)` as a one-task graph and returns a `Delayed<R>` (R is f's
// result type, deduced as Graph::task deduces parameters). Its key is `name-<token>`: a
// token of the function's identity and the arguments when all of them can be hashed
// (integers, floating point, bool, strings, vectors of those, other Delayed values' keys),
// else a name never given before. Equal calls thus share one key, and their graphs merge.
// A Delayed argument becomes a dependency (a `ref` to its key), a std::vector of them a
// list of dependencies (taken by a `std::vector<T>` parameter); any other argument is a
// literal. Nothing runs until `compute`, which merges the graphs of all its arguments by
// key and runs them in one `get`: a part shared by several results is computed once.
//
// @code
//   int load(int i) { return i * 10; }
//   int add(int a, int b) { return a + b; }
//   auto a = tessera::delayed(TESSERA_FN(load))(1);
//   auto b = tessera::delayed(TESSERA_FN(load))(2);
//   auto c = tessera::delayed(TESSERA_FN(add))(a, b);    // depends on a and b
//   int v = c.compute();                                  // 30
//   auto [x, y] = tessera::compute(a, c);                 // 10, 30: `load(1)` runs once
//   tessera::visualize(c, "c.dot");                       // Graphviz dot
// @endcode
//
// Function identity: a plain function by where it lies in its program (below), a capture-free lambda or functor by
// its type, a named one (`TESSERA_FN`, `fn`) by its name and type; a callable with state
// (captures) cannot be hashed, so its calls get unique keys. A plain function counts by its
// offset in the file that holds it, not its address, so the ranks of one MPI program give
// a call the same key (tessera::mpi::get needs that); tokens of the other kinds are the
// same in every process of one program too.
//
// Thread-safe: a Delayed is immutable; copies are cheap (shared state).
// Arrays convert to and from lazy blocks in tessera/array/delayed.hpp (to_delayed,
// from_delayed), so that this header needs no Eigen.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <typeinfo>
#include <utility>
#include <vector>

#include "tessera/graph/callable.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/scheduler/options.hpp"

namespace tessera {

//! A lazy value, untyped: a key and the graph fragments that produce it.
class Lazy {
 public:
  //! The key of this value in its graph.
  const Key& key() const { return state_->key; }
  //! One graph holding every task this value needs.
  Graph graph() const;
  //! Runs the graph with tessera's `get` and returns the value. Throws TaskError when
  //! a task fails, TypeError when an argument has the wrong type for its parameter.
  Value compute_value(const GetOptions& options = {}) const;

  //! A lazy value that is `key` of `fragment` (which must define it), after the values
  //! of `deps`. Used by `delayed`, `persist` and `to_delayed`.
  Lazy(Key key, std::shared_ptr<const Graph> fragment, std::vector<Lazy> deps = {});

 private:
  struct State {
    Key key;
    std::shared_ptr<const Graph> fragment;
    std::vector<Lazy> deps;
  };
  friend Graph merged_graph(const std::vector<Lazy>& values);
  std::shared_ptr<const State> state_;
};

//! One graph holding every task of `values`, merged by key: a key two of them share
//! appears once.
Graph merged_graph(const std::vector<Lazy>& values);

namespace detail {
template <class T>
T typed(const Value& v);
}  // namespace detail

//! A lazy value of type T (see the file comment).
template <class T>
class Delayed : public Lazy {
 public:
  //! T, the type the value computes to.
  using value_type = T;
  //! Types a lazy value as T.
  explicit Delayed(Lazy l) : Lazy(std::move(l)) {}
  //! Runs the graph and returns the value as T.
  T compute(const GetOptions& options = {}) const {
    return detail::typed<T>(compute_value(options));
  }
};

namespace detail {

//! `v` as T (a Value as it is); throws TypeError naming both types.
template <class T>
T typed(const Value& v) {
  if constexpr (std::is_same_v<T, Value>) {
    return v;
  } else {
    return v.as<T>();
  }
}

//! What a call's result becomes as a Delayed parameter: void gives Value (empty).
template <class R>
using delayed_value_t = std::conditional_t<std::is_void_v<R>, Value, std::decay_t<R>>;

template <class T>
struct is_delayed : std::false_type {};
template <class T>
struct is_delayed<Delayed<T>> : std::true_type {};
template <class T>
inline constexpr bool is_lazy_v = is_delayed<std::decay_t<T>>::value || std::is_same_v<std::decay_t<T>, Lazy>;
//! A std::vector of lazy values: passed as a list of their results.
template <class T>
struct is_lazy_vector : std::false_type {};
template <class T, class A>
struct is_lazy_vector<std::vector<T, A>> : std::bool_constant<is_lazy_v<T>> {};
template <class T>
inline constexpr bool is_lazy_vector_v = is_lazy_vector<std::decay_t<T>>::value;

//! Text standing for `x` in a token, or nullopt when x cannot be hashed.
std::optional<std::string> hash_part(const Lazy& x);
std::optional<std::string> hash_part(const std::string& x);
std::optional<std::string> hash_part(std::string_view x);
std::optional<std::string> hash_part(const char* x);
std::optional<std::string> hash_part(bool x);
std::optional<std::string> hash_part(int64_t x);
std::optional<std::string> hash_part(uint64_t x);
std::optional<std::string> hash_part(double x);
template <class T>
std::optional<std::string> hash_part(const T& x) {
  using D = std::decay_t<T>;
  if constexpr (is_delayed<D>::value) {
    return hash_part(static_cast<const Lazy&>(x));
  } else if constexpr (std::is_integral_v<D> && std::is_signed_v<D>) {
    return hash_part(static_cast<int64_t>(x));
  } else if constexpr (std::is_integral_v<D>) {
    return hash_part(static_cast<uint64_t>(x));
  } else if constexpr (std::is_floating_point_v<D>) {
    return hash_part(static_cast<double>(x));
  } else if constexpr (is_std_vector<D>::value) {
    std::string out = "[";
    for (const auto& item : x) {
      std::optional<std::string> p = hash_part(item);
      if (!p) return std::nullopt;
      out += *p;
      out += ',';
    }
    return out + "]";
  } else {
    return std::nullopt;
  }
}

//! A plain function's identity: its offset in the program or library that holds it and
//! that file's name, the same in every process of one program (an address is not: ASLR
//! loads the program at another address in each process, so MPI ranks would disagree).
std::string function_pointer_identity(const void* f);

//! The identity of callable F for tokens, or nullopt when it holds state.
template <class F>
std::optional<std::string> function_identity(const F& f) {
  if constexpr (requires { f.name; f.f; }) {
    std::optional<std::string> inner = function_identity(f.f);
    if (!inner) return std::nullopt;
    return f.name + "|" + *inner;
  } else if constexpr (std::is_pointer_v<F>) {
    return function_pointer_identity(reinterpret_cast<const void*>(f)) + "|" + typeid(F).name();
  } else if constexpr (std::is_empty_v<F>) {
    return std::string(typeid(F).name());
  } else {
    return std::nullopt;
  }
}

//! The key of a call: `name-<token of identity and parts>`, unique when any is missing.
Key call_key(std::string_view function_name, const std::optional<std::string>& identity,
             const std::vector<std::optional<std::string>>& parts);

//! A task argument for `x`: a reference for a lazy value, a list of references for a
//! vector of them, else the literal.
template <class A>
Arg to_arg(A&& x) {
  if constexpr (is_lazy_v<A>) {
    return Arg(ref(x.key()));
  } else if constexpr (is_lazy_vector_v<A>) {
    ArgList l;
    l.items.reserve(x.size());
    for (const auto& item : x) l.items.emplace_back(ref(item.key()));
    return Arg(std::move(l));
  } else if constexpr (std::is_convertible_v<A, const char*>) {
    return Arg(std::string(x));
  } else {
    return Arg(std::forward<A>(x));
  }
}

template <class A>
void collect_dep(std::vector<Lazy>& deps, const A& x) {
  if constexpr (is_lazy_v<A>) {
    deps.push_back(static_cast<const Lazy&>(x));
  } else if constexpr (is_lazy_vector_v<A>) {
    deps.insert(deps.end(), x.begin(), x.end());
  }
}

}  // namespace detail

//! A callable that records calls of `f` instead of running them (see the file comment).
template <class F>
class DelayedFn {
 public:
  //! Wraps `f`.
  explicit DelayedFn(F f) : f_(std::move(f)) {}

  //! A lazy call of `f` with `args` (lazy arguments become dependencies); nothing runs.
  template <class... A>
  auto operator()(A&&... args) const {
    using R = detail::delayed_value_t<call_result_t<F>>;
    std::vector<std::optional<std::string>> parts{detail::hash_part(args)...};
    std::vector<Lazy> deps;
    (detail::collect_dep(deps, args), ...);
    std::vector<Arg> task_args;
    task_args.reserve(sizeof...(A));
    (task_args.push_back(detail::to_arg(std::forward<A>(args))), ...);
    Task task = Task::from_args(f_, std::move(task_args));
    Key key = detail::call_key(task.function_name(), detail::function_identity(f_), parts);
    auto fragment = std::make_shared<Graph>();
    fragment->put(key, std::move(task));
    return Delayed<R>(Lazy(std::move(key), std::move(fragment), std::move(deps)));
  }

 private:
  F f_;
};

//! `delayed(f)(args...)`: the call f(args...) as a lazy value.
template <class F>
DelayedFn<std::decay_t<F>> delayed(F&& f) {
  return DelayedFn<std::decay_t<F>>(std::forward<F>(f));
}

namespace detail {
//! The values of `values` from one `get` of their merged graph.
std::vector<Value> compute_values(const std::vector<Lazy>& values, const GetOptions& options);
}  // namespace detail

//! Runs the graphs of `values` together in one `get` (shared keys once) and returns
//! their results, typed, in order.
template <class... T>
std::tuple<T...> compute(const GetOptions& options, const Delayed<T>&... values) {
  std::vector<Value> results = detail::compute_values({Lazy(values)...}, options);
  return [&]<size_t... I>(std::index_sequence<I...>) {
    return std::tuple<T...>{detail::typed<T>(results[I])...};
  }(std::index_sequence_for<T...>{});
}

//! `compute(a, b, ...)` with default options.
template <class... T>
std::tuple<T...> compute(const Delayed<T>&... values) {
  return compute(GetOptions{}, values...);
}

//! Computes `value` and returns a lazy value of the same key whose graph is just the
//! literal result: later graphs built on it do not run its tasks again.
template <class T>
Delayed<T> persist(const Delayed<T>& value, const GetOptions& options = {}) {
  auto fragment = std::make_shared<Graph>();
  fragment->put(value.key(), value.compute_value(options));
  return Delayed<T>(Lazy(value.key(), std::move(fragment)));
}

//! The merged graph of `values` in Graphviz dot: one node per key (labelled with its
//! task's function), one edge per dependency.
std::string to_dot(const std::vector<Lazy>& values);
//! Writes `to_dot(values)` to `path` (through a temporary name, renamed on success).
void visualize(const std::vector<Lazy>& values, const std::string& path);

}  // namespace tessera
