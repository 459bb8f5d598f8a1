// tessera/graph/function_ref.hpp — FunctionRef, a non-owning reference to a callable.
//
// What a function that calls back into its caller takes, instead of a
// std::function (which may allocate) or a template (which must live in the
// header): a pointer to the callable and one to a function that calls it. It
// must not outlive the callable it was made from, so it is for parameters only.
// The standard library has none before C++26 (std::function_ref); Abseil's would
// tie tessera's users to the Abseil tessera was built with.
//
// @code
//   void visit_all(tessera::FunctionRef<void(int)> f) { for (int i = 0; i < 3; ++i) f(i); }
//   int sum = 0;
//   visit_all([&](int i) { sum += i; });   // sum == 3
// @endcode
#pragma once

#include <functional>
#include <memory>
#include <type_traits>
#include <utility>

namespace tessera {

//! A non-owning reference to a callable of signature `Signature` (see the file comment).
template <class Signature>
class FunctionRef;

//! A non-owning reference to a callable taking `Args...` and returning `R`.
template <class R, class... Args>
class FunctionRef<R(Args...)> {
 public:
  //! Refers to `f`, which must outlive this FunctionRef.
  template <class F>
    requires(!std::is_same_v<std::remove_cvref_t<F>, FunctionRef> && std::is_invocable_r_v<R, F&, Args...>)
  FunctionRef(F&& f) noexcept  // NOLINT(google-explicit-constructor): passed as a lambda
      : object_(const_cast<void*>(static_cast<const void*>(std::addressof(f)))),
        call_([](void* object, Args... args) -> R {
          return std::invoke(*static_cast<std::remove_reference_t<F>*>(object), std::forward<Args>(args)...);
        }) {}

  //! Calls the referred callable.
  R operator()(Args... args) const { return call_(object_, std::forward<Args>(args)...); }

 private:
  void* object_;
  R (*call_)(void*, Args...);
};

}  // namespace tessera
