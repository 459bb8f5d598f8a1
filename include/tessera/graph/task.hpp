// tessera/graph/task.hpp — a callable and its arguments, as in dask's graph spec.
//
// An argument is one of four things:
//   - a key reference, `ref("x")` or `ref("x", {0, 1})`: the value of that key;
//   - a literal: any other object, passed as it is;
//   - a nested task, `Task(f, ...)`: run first, its result passed;
//   - a list, `list(a, b, ...)`: each element evaluated, passed as a ValueList
//     (or as std::vector<T> to a typed parameter).
// Typed tasks deduce the parameter types of a function or lambda and convert each
// evaluated argument with `Value::as<T>()`; a parameter of type `Value` or
// `const ValueList&` takes the value as it is. A callable taking
// `std::span<const Value>` receives the evaluated arguments untyped
// (tessera/graph/callable.hpp does the calling).
//
// Messages name the task's function. `fn("add", add)` or `TESSERA_FN(add)` gives
// the name; without it a plain function is looked up in the dynamic symbol table,
// which knows it only in shared libraries and in programs linked with -rdynamic.
//
// @code
//   int add(int a, int b) { return a + b; }
//   tessera::Task t(TESSERA_FN(add), tessera::ref("x"), 10);
//   t.dependencies();            // {x}
//   t.function_name();           // "add", with or without -rdynamic
// @endcode
//
// Thread-safe: a Task is immutable once built; `run` may be called concurrently.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <variant>
#include <vector>

#include "tessera/graph/function_ref.hpp"
#include <span>

#include "tessera/graph/callable.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

//! A reference to another key's value, made by `ref`.
struct Ref {
  //! The key whose value is passed.
  Key key;
};
//! `ref("x")`: the value of key x.
inline Ref ref(Key key) { return Ref{std::move(key)}; }
//! `ref("x", {0, 1})`: the value of key ('x', 0, 1).
inline Ref ref(std::string_view name, std::initializer_list<int64_t> index) {
  return Ref{Key(name, index)};
}

class Task;
class Arg;

namespace detail {
//! A pointer to a function, bare or named with fn(): what Task shares a
//! wrapper for between tasks.
template <class F>
inline constexpr bool plain_function = std::is_pointer_v<F> && std::is_function_v<std::remove_pointer_t<F>>;
template <class F>
inline constexpr bool plain_function<NamedFn<F>> = plain_function<F>;
template <class F>
bool same_function(const F& a, const F& b) {
  return a == b;
}
template <class F>
bool same_function(const NamedFn<F>& a, const NamedFn<F>& b) {
  return a.f == b.f && a.name == b.name;
}
}  // namespace detail

//! A list argument: `list(ref("a"), ref("b"), 3)`.
struct ArgList {
  //! The list's arguments.
  std::vector<Arg> items;
};
template <class... A>
ArgList list(A&&... a);

//! One argument of a task (see the file comment).
class Arg {
 public:
  //! A reference to a key's value.
  Arg(Ref r) : v_(RefArg{std::move(r.key), 0}) {}  // NOLINT(google-explicit-constructor)
  //! A nested task, run first.
  Arg(Task t);                                        // NOLINT(google-explicit-constructor)
  //! A list of arguments.
  Arg(ArgList l);                                     // NOLINT(google-explicit-constructor)
  //! A literal value.
  Arg(Value literal) : v_(std::move(literal)) {}      // NOLINT(google-explicit-constructor)
  //! A literal of any other type, wrapped in a Value.
  template <class T>
    requires(!std::is_same_v<std::decay_t<T>, Arg> && !std::is_same_v<std::decay_t<T>, Ref> &&
             !std::is_same_v<std::decay_t<T>, Task> && !std::is_same_v<std::decay_t<T>, ArgList> &&
             !std::is_same_v<std::decay_t<T>, Value>)
  Arg(T&& literal) : v_(Value(std::forward<T>(literal))) {}  // NOLINT(google-explicit-constructor)

  //! True for a reference.
  bool is_ref() const { return std::holds_alternative<RefArg>(v_); }
  //! The referenced key; only for a reference.
  const Key& key() const { return std::get<RefArg>(v_).key; }
  //! The literal value; nullptr unless this argument is a literal.
  const Value* literal() const { return std::get_if<Value>(&v_); }
  //! Levels of nested tasks and lists in this argument (0 for a key or a literal).
  uint32_t depth() const;

 private:
  friend class Task;
  struct RefArg {
    Key key;
    uint32_t slot;  // position of key in the owning task's dependencies()
  };
  struct NestedArg {
    std::shared_ptr<const Task> task;
    std::vector<uint32_t> slots;  // nested dependency i is the owner's dependency slots[i]
  };
  struct ListArg {
    std::vector<Arg> items;
    uint32_t depth = 1;  // levels of tasks and lists in it, itself included
  };
  std::variant<RefArg, Value, NestedArg, std::shared_ptr<ListArg>> v_;
};

template <class... A>
ArgList list(A&&... a) {
  ArgList l;
  l.items.reserve(sizeof...(A));
  (l.items.emplace_back(std::forward<A>(a)), ...);
  return l;
}

//! How deep tasks and lists may nest in a task's arguments (a task holding a
//! task holding ... a list of lists). Deeper arguments are refused with Error
//! when the task or list is built, so that running, copying and destroying a
//! task never recurse deeper than this.
inline constexpr uint32_t kMaxArgNesting = 1000;

//! A call of a function with arguments; the typed constructor deduces parameter types from the function.
class Task {
 public:
  //! A task calling `f` (a function, lambda, or `fn(name, f)`) with `args`.
  template <class F, class... A>
    requires(!std::is_same_v<std::decay_t<F>, Task>)
  explicit Task(F&& f, A&&... args) {
    std::vector<Arg> list;
    list.reserve(sizeof...(A));
    (list.emplace_back(std::forward<A>(args)), ...);
    init(std::forward<F>(f), std::move(list));
  }
  //! A task calling `f` with a runtime list of arguments.
  template <class F>
  static Task from_args(F&& f, std::vector<Arg> args) {
    Task t;
    t.init(std::forward<F>(f), std::move(args));
    return t;
  }

  //! The function's name, for messages and profiles.
  const std::string& function_name() const { return *name_; }
  //! Keys this task reads (nested tasks and lists included), each once, in
  //! order of first appearance.
  const std::vector<Key>& dependencies() const { return deps_; }
  //! The arguments, as given.
  const std::vector<Arg>& args() const { return args_; }
  //! Levels of tasks and lists in this task, itself included (at most kMaxArgNesting).
  uint32_t depth() const { return depth_; }

  //! Evaluates the arguments and calls the function. `dep(i)` gives the value of
  //! `dependencies()[i]`. Argument type mismatches raise ArgumentTypeError.
  Value run(FunctionRef<const Value&(size_t)> dep) const;

 private:
  Task() = default;
  template <class F>
  void init(F&& f, std::vector<Arg> args) {
    using D = std::decay_t<F>;
    if constexpr (detail::plain_function<D>) {
      // Tasks of one plain function share its name and wrapper: a graph of
      // 10^5 tasks of `inc` would otherwise look its name up (under a lock)
      // and allocate a wrapper 10^5 times. The wrapper holds only the
      // function's address, so sharing it changes nothing; one entry per
      // thread and function type, remade when another function comes.
      struct Last {
        D f{};
        size_t arity = 0;
        const std::string* name = nullptr;
        std::shared_ptr<const RawFn> fn;
      };
      thread_local Last last;
      const D& given = f;  // a function reference becomes its pointer
      if (!last.fn || !detail::same_function(last.f, given) || last.arity != args.size()) {
        Callable c = make_callable(given, args.size());
        last = Last{given, args.size(), c.name, std::make_shared<const RawFn>(std::move(c.fn))};
      }
      name_ = last.name;
      fn_ = last.fn;
    } else {
      Callable c = make_callable(std::forward<F>(f), args.size());
      name_ = c.name;
      fn_ = std::make_shared<const RawFn>(std::move(c.fn));
    }
    args_ = std::move(args);
    assign_slots();
  }
  void assign_slots();
  struct SlotIndex;
  uint32_t slot_of(const Key& k, SlotIndex& index);
  void assign_slots(std::vector<Arg>& args, SlotIndex& index);
  Value evaluate(const Arg& a, FunctionRef<const Value&(size_t)> dep) const;

  const std::string* name_ = nullptr;  // interned: tasks of one function share it
  std::shared_ptr<const RawFn> fn_;
  std::vector<Arg> args_;
  std::vector<Key> deps_;
  uint32_t depth_ = 1;
};

inline Arg::Arg(Task t) : v_(NestedArg{std::make_shared<const Task>(std::move(t)), {}}) {}

namespace detail {
//! 1 + the deepest of `args`; Error naming `what` past kMaxArgNesting.
uint32_t nesting_of(const std::vector<Arg>& args, const char* what);
}  // namespace detail

inline Arg::Arg(ArgList l) : v_(std::make_shared<ListArg>(ListArg{std::move(l.items)})) {
  auto& list = *std::get<std::shared_ptr<ListArg>>(v_);
  list.depth = detail::nesting_of(list.items, "an argument list");
}

inline uint32_t Arg::depth() const {
  if (const auto* n = std::get_if<NestedArg>(&v_)) return n->task->depth();
  if (const auto* l = std::get_if<std::shared_ptr<ListArg>>(&v_)) return (*l)->depth;
  return 0;
}

}  // namespace tessera
