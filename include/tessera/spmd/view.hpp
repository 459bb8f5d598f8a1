// tessera/spmd/view.hpp — ipyparallel's BroadcastView over a local Cluster.
//
// A BroadcastView sends one request to every engine of its view at once; each
// engine runs it on its own thread against its own namespace of named Values.
// `apply(fn, args...)` calls fn once per engine (single program, multiple data):
// an argument `Reference("name")` becomes that engine's value of `name`, any other
// argument is passed as it is to every engine. fn's parameters are typed as for a
// tessera::Task (see tessera/graph/callable.hpp): each value is converted with
// `Value::as<P>()`, a `Value` parameter takes it untyped, a callable of
// `std::span<const Value>` gets all of them. Inside fn, `spmd::context()` gives
// the rank, the size and collectives (tessera/spmd/context.hpp).
//
// Requests reach every engine in the order they were made (also from several
// threads), so `push` then `apply` sees the pushed value, and collectives of
// successive applies never cross.
//
// @code
//   tessera::spmd::Cluster cluster(4);
//   auto view = cluster.broadcast_view();
//   view.scatter("rank", cluster.ids(), /*flatten=*/true);   // engine i: rank = i
//   view["offset"] = 10;                                      // push to every engine
//   auto ar = view.apply([](int rank, int offset) { return rank + offset; },
//                        tessera::spmd::Reference("rank"), tessera::spmd::Reference("offset"));
//   ar.get();                                                 // {10, 11, 12, 13}
//   view.gather<int>("rank").get();                           // {0, 1, 2, 3}
// @endcode
//
// Thread-safe: a view may be copied and used from several threads. Functions
// given to apply and execute run concurrently on every engine and must be safe
// to call so.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

#include <span>

#include "tessera/graph/callable.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/spmd/async_result.hpp"
#include "tessera/spmd/detail/job.hpp"
#include "tessera/spmd/partition.hpp"
#include "tessera/spmd/registry.hpp"

namespace tessera::spmd {

//! An apply argument that stands for the value of `name` in each engine's namespace.
struct Reference {
  //! Stands for `n` in each engine's namespace.
  explicit Reference(std::string n) : name(std::move(n)) {}
  //! The name it stands for.
  std::string name;
};

namespace detail {

class ClusterState;

//! One apply argument: a literal for every engine, or a Reference.
struct ApplyArg {
  Value literal;
  std::string reference;
  bool is_reference = false;
};

template <class A>
ApplyArg make_apply_arg(A&& a) {
  using D = std::remove_cvref_t<A>;
  if constexpr (std::is_same_v<D, Reference>) {
    return {Value(), a.name, true};
  } else if constexpr (std::is_same_v<D, Value>) {
    return {std::forward<A>(a), {}, false};
  } else if constexpr (std::is_convertible_v<A, std::string_view> && !std::is_same_v<D, std::string>) {
    return {Value(std::string(std::string_view(a))), {}, false};  // string literals as std::string
  } else {
    return {Value(std::forward<A>(a)), {}, false};
  }
}

//! What fn returns on one engine (void stays void).
template <class F>
using apply_result_t = std::decay_t<call_result_t<F>>;

}  // namespace detail

class BroadcastView;

namespace detail {
//! A view of `cluster`'s engines `targets`, for the clusters (local or MPI) that make views.
BroadcastView make_view(std::shared_ptr<ClusterState> cluster, std::vector<int> targets);
}  // namespace detail

//! `view["name"]`: assigning pushes a value to every engine; get<T>() pulls it.
class NameProxy {
 public:
  //! Made by BroadcastView::operator[].
  NameProxy(const BroadcastView& view, std::string name) : view_(&view), name_(std::move(name)) {}
  //! Pushes `value` to every engine of the view and waits (raises CompositeError).
  const NameProxy& operator=(Value value) const;
  //! The value on every engine, as a T, in engine order.
  template <class T>
  std::vector<T> get() const;

 private:
  const BroadcastView* view_;
  std::string name_;
};

//! Runs functions and moves values on every engine of a cluster at once, as ipyparallel's BroadcastView.
class BroadcastView {
 public:
  //! Calls `fn(args...)` once on every engine; a Reference argument is replaced by
  //! the engine's value of that name. Throws TypeError at once when the number of
  //! arguments does not match fn's; an engine-side NameError or argument TypeError
  //! comes back as a CompositeError from get().
  //! @code  auto sums = view.apply(work, folder, Reference("rank"), 8).get();  @endcode
  template <class F, class... A>
  AsyncResult<detail::apply_result_t<std::decay_t<F>>> apply(F&& fn, A&&... args) const {
    std::vector<detail::ApplyArg> list;
    list.reserve(sizeof...(A));
    (list.push_back(detail::make_apply_arg(std::forward<A>(args))), ...);
    return AsyncResult<detail::apply_result_t<std::decay_t<F>>>(
        submit_apply("apply", std::forward<F>(fn), std::move(list)));
  }
  //! Runs `fn()` on every engine for its side effects (on the namespace through
  //! spmd::context(), on files, ...); its result is discarded.
  template <class F>
  AsyncResult<void> execute(F&& fn) const {
    return AsyncResult<void>(submit_apply("execute", std::forward<F>(fn), {}));
  }

  //! Sets `name` to `value` in every engine's namespace.
  AsyncResult<void> push(const std::string& name, Value value) const;
  //! Sets every name of `ns` in every engine's namespace: push({{"a", 1}, {"b", 2.5}}).
  AsyncResult<void> push(const std::map<std::string, Value>& ns) const;
  //! Every engine's value of `name`, untyped; a missing name is a NameError on that engine.
  AsyncResult<Value> pull(const std::string& name) const { return AsyncResult<Value>(pull_job("pull", name)); }
  //! Every engine's value of `name` as a T.
  template <class T>
  AsyncResult<T> pull(const std::string& name) const {
    return AsyncResult<T>(pull_job("pull", name));
  }
  //! Splits `seq` into one part per engine (ipyparallel's block distribution: sizes
  //! differ by at most one, the larger first) and sets `name` to the part, a
  //! std::vector<T>; with `flatten`, a part of exactly one item is set as the item.
  template <class T>
  AsyncResult<void> scatter(const std::string& name, const std::vector<T>& seq, bool flatten = false) const {
    std::vector<Value> parts;
    parts.reserve(targets_.size());
    for (size_t p = 0; p < targets_.size(); ++p) {
      auto [begin, end] = detail::scatter_bounds(seq.size(), p, targets_.size());
      if (flatten && end - begin == 1) {
        parts.emplace_back(seq[begin]);
      } else {
        parts.emplace_back(std::vector<T>(seq.begin() + begin, seq.begin() + end));
      }
    }
    return AsyncResult<void>(submit_parts("scatter", name, std::move(parts)));
  }
  //! The engines' values of `name` joined in engine order: each a T or a
  //! std::vector<T> (what scatter left), so gather undoes scatter.
  template <class T>
  AsyncResult<T> gather(const std::string& name) const {
    return AsyncResult<T>(pull_job("gather", name), /*gathered=*/true);
  }
  //! `view["x"] = 5` pushes; `view["x"].get<int>()` pulls.
  NameProxy operator[](std::string name) const { return NameProxy(*this, std::move(name)); }

  //! The engine ids of this view, in result order.
  const std::vector<int>& targets() const { return targets_; }
  //! Number of engines.
  size_t size() const { return targets_.size(); }

 private:
  friend BroadcastView detail::make_view(std::shared_ptr<detail::ClusterState>, std::vector<int>);
  BroadcastView(std::shared_ptr<detail::ClusterState> cluster, std::vector<int> targets);

  template <class F>
  std::shared_ptr<const detail::Job> submit_apply(const char* method, F&& fn,
                                                  std::vector<detail::ApplyArg> args) const {
    // Engines in other processes know the function by its registered name only.
    const std::string* registered = by_name() ? registered_name(fn) : nullptr;
    Callable callable = callable_of(std::forward<F>(fn), args.size());
    return submit_raw(method, std::move(callable), registered, std::move(args));
  }
  // The arity error names the function, as an engine-side argument error does.
  template <class F>
  static Callable callable_of(F&& fn, size_t arity) {
    try {
      return make_callable(std::forward<F>(fn), arity);
    } catch (const TypeError& e) {
      throw_arity(*callable_name<std::decay_t<F>>(fn), e);
    }
  }
  [[noreturn]] static void throw_arity(const std::string& name, const TypeError& e);
  bool by_name() const;
  std::shared_ptr<const detail::Job> submit_raw(const char* method, Callable callable, const std::string* registered,
                                                std::vector<detail::ApplyArg> args) const;
  std::shared_ptr<const detail::Job> submit_parts(const char* method, const std::string& name,
                                                  std::vector<Value> parts) const;
  std::shared_ptr<const detail::Job> pull_job(const char* method, const std::string& name) const;

  std::shared_ptr<detail::ClusterState> cluster_;
  std::vector<int> targets_;
};

template <class T>
std::vector<T> NameProxy::get() const {
  return view_->pull<T>(name_).get();
}

}  // namespace tessera::spmd
