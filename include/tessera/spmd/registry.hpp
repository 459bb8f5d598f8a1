// tessera/spmd/registry.hpp — SPMD functions known by name, for engines in other processes.
//
// Engines that are MPI ranks (tessera/mpi/cluster.hpp) run the same binary as the
// client, but a function's address differs from one process to the next, so an
// apply names its function instead. Every process registers the same functions
// at static initialization, at namespace scope; the client turns the callable it
// is given back into that name, and each engine turns the name into its own copy.
// A plain function is recognised by its address, a lambda or function object by
// its type (one registration per lambda expression). A local Cluster needs none of
// this; registering is harmless there.
//
// @code
//   std::vector<int> work(const std::string& folder, int rank, int size);
//   TESSERA_SPMD_REGISTER(work);                       // at namespace scope
//   inline constexpr auto square = [](int x) { return x * x; };
//   TESSERA_SPMD_REGISTER(square);
//   view.apply(work, folder, Reference("rank"), 4);     // sent as "work"
// @endcode
//
// Thread-safe: registering and looking up may happen from any thread.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <type_traits>
#include <typeindex>
#include <typeinfo>

#include "tessera/graph/callable.hpp"

namespace tessera::spmd {

namespace detail {

//! Makes the callable's RawFn for a given number of arguments (TypeError on a mismatch).
using RawFnFactory = std::function<RawFn(size_t arity)>;

//! Adds `name`, found from a function's `address` (or null) or else from `type`.
//! Throws tessera::Error when `name` is registered already for another function.
bool register_raw(std::string name, const void* address, std::type_index type, RawFnFactory factory);
//! The registered name of the function at `address` or of type `type`; null when none.
const std::string* registered_name(const void* address, std::type_index type);
//! The factory registered under `name`; throws tessera::Error when there is none.
const RawFnFactory& registered_factory(const std::string& name);

}  // namespace detail

//! Registers `f` (a function, a lambda or a function object) under `name`; returns
//! true so that it can initialize a namespace-scope variable.
template <class F>
bool register_function(std::string name, F f) {
  using D = std::decay_t<F>;  // a function decays to its pointer
  D held = f;
  const void* address = nullptr;
  if constexpr (std::is_pointer_v<D>) address = reinterpret_cast<const void*>(held);
  return detail::register_raw(std::move(name), address, std::type_index(typeid(D)),
                              [held](size_t arity) { return make_raw_fn(held, arity); });
}

//! The registered name of `fn` (a NamedFn is looked up by the callable it wraps);
//! null when it was not registered.
template <class F>
const std::string* registered_name(const F& fn) {
  using D = std::decay_t<F>;  // a function (not its pointer) arrives by reference
  if constexpr (requires { fn.name; fn.f; }) {
    return registered_name(fn.f);
  } else if constexpr (std::is_pointer_v<D>) {
    return detail::registered_name(reinterpret_cast<const void*>(static_cast<D>(fn)), std::type_index(typeid(D)));
  } else {
    return detail::registered_name(nullptr, std::type_index(typeid(D)));
  }
}

}  // namespace tessera::spmd

#define TESSERA_SPMD_CONCAT_INNER(a, b) a##b
#define TESSERA_SPMD_CONCAT(a, b) TESSERA_SPMD_CONCAT_INNER(a, b)
//! `TESSERA_SPMD_REGISTER(work);` at namespace scope registers `work` under its spelling.
#define TESSERA_SPMD_REGISTER(f)                                                             \
  [[maybe_unused]] static const bool TESSERA_SPMD_CONCAT(tessera_spmd_registered_, __COUNTER__) = \
      ::tessera::spmd::register_function(#f, f)
