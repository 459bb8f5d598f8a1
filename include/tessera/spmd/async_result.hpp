// tessera/spmd/async_result.hpp — the handle to a request that engines are running.
//
// Every BroadcastView call returns at once with an AsyncResult<T>, as
// ipyparallel's non-blocking views do. `get()` waits and gives one T per engine,
// in the view's engine order (for `gather`, the gathered sequence); when any
// engine failed it raises one CompositeError instead. `get(timeout)` raises
// TimeoutError when the engines are not done in time (the request keeps running;
// ask again later). AsyncResult<void> (push, scatter, execute) has `get()` that
// only waits and raises.
//
// @code
//   auto ar = view.apply([](int x) { return x * x; }, 3);
//   ar.wait(std::chrono::milliseconds(10));     // true when done
//   std::vector<int> squares = ar.get();        // {9, 9, ...}, one per engine
//   ar.elapsed();                               // submission to completion
// @endcode
//
// Thread-safe: copies share one request; all members may be called from any thread.
#pragma once

#include <chrono>
#include <memory>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/spmd/detail/job.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::spmd {

namespace detail {

//! Waits for `job` (forever when `timeout` is negative) and raises TimeoutError
//! or CompositeError.
void wait_or_throw(const Job& job, std::chrono::duration<double> timeout);
//! A TypeError saying which engine's result of `job` did not convert.
[[noreturn]] void throw_result_type(const Job& job, size_t slot, const TypeError& e);

// Appends one engine's gathered part, a T or a std::vector<T>, to `out`.
template <class T>
void append_part(std::vector<T>& out, const Value& part) {
  if (part.is<std::vector<T>>()) {
    const auto& items = part.as<std::vector<T>>();
    out.insert(out.end(), items.begin(), items.end());
  } else {
    out.push_back(part.as<T>());
  }
}

}  // namespace detail

template <class T>
//! The pending results of a request to several engines: get() waits for every engine's.
class AsyncResult {
 public:
  //! What get() returns: one T per engine (void for AsyncResult<void>).
  using Results = std::conditional_t<std::is_void_v<T>, void, std::vector<T>>;
  //! A timeout that never expires (the default of get and wait).
  static constexpr std::chrono::duration<double> forever{-1.0};

  //! Made by BroadcastView; `gathered` joins the engines' parts into one sequence.
  explicit AsyncResult(std::shared_ptr<const detail::Job> job, bool gathered = false)
      : job_(std::move(job)), gathered_(gathered) {}

  //! Waits for every engine; the results in engine order. Raises CompositeError
  //! when any engine failed, TypeError when a result is not a T.
  Results get() const { return get(forever); }
  //! As get(), but raises TimeoutError when not done within `timeout`.
  Results get(std::chrono::duration<double> timeout) const {
    detail::wait_or_throw(*job_, timeout);
    if constexpr (!std::is_void_v<T>) return convert();
  }
  //! Waits until done or until `timeout` passes (forever when negative); true when done.
  bool wait(std::chrono::duration<double> timeout = forever) const { return job_->wait(timeout); }
  //! True when every engine has finished (successfully or not).
  bool ready() const { return job_->ready(); }
  //! True when ready and no engine failed.
  bool successful() const { return ready() && !job_->failed(); }
  //! The ids of the engines the request went to, in result order.
  const std::vector<int>& engine_ids() const { return job_->engine_ids(); }
  //! Time from submission to completion (to now, while running).
  std::chrono::duration<double> elapsed() const { return job_->elapsed(); }
  //! The request's method: "apply", "execute", "push", "pull", "scatter" or "gather".
  const std::string& method() const { return job_->method(); }

 private:
  template <class U = T>
  std::vector<U> convert() const {
    const std::vector<Value>& values = job_->values();
    std::vector<U> out;
    out.reserve(values.size());
    for (size_t i = 0; i < values.size(); ++i) {
      try {
        if constexpr (std::is_same_v<U, Value>) {
          out.push_back(values[i]);
        } else if (gathered_) {
          detail::append_part(out, values[i]);
        } else {
          out.push_back(values[i].as<U>());
        }
      } catch (const TypeError& e) {
        detail::throw_result_type(*job_, i, e);
      }
    }
    return out;
  }

  std::shared_ptr<const detail::Job> job_;
  bool gathered_;
};

}  // namespace tessera::spmd
