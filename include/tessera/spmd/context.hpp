// tessera/spmd/context.hpp — what an SPMD function can ask about the apply it runs in.
//
// Inside a function run by BroadcastView::apply or execute, `spmd::context()` gives
// the engine's rank among the engines of that apply, their number, the engine's
// namespace, and collectives among exactly those engines: `barrier()`,
// `allgather`, `allreduce` (sum, min, max, or any associative function).
//
// Why a thread-local accessor rather than an extra parameter: the function keeps
// the signature it has when called on its own (`work(items, rank, size)`), so the
// typed invocation shared with tessera::Task applies unchanged, helpers deep in the
// call stack reach the collectives without threading a parameter through, and
// code reads like mpi4py's `COMM_WORLD`, which ipyparallel users already write.
//
// Every engine of the apply must make the same sequence of collective calls. When
// one engine raises before a collective, or returns without reaching it, the
// engines waiting there raise BarrierError instead of waiting forever.
//
// @code
//   double normalized(const std::vector<double>& mine) {
//     const auto& ctx = tessera::spmd::context();
//     double local = std::accumulate(mine.begin(), mine.end(), 0.0);
//     double total = ctx.allreduce(local, tessera::spmd::ReduceOp::sum);
//     ctx.barrier();
//     return local / total;
//   }
// @endcode
//
// Thread-safe: a Context belongs to one engine's thread for the length of one call.
#pragma once

#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/graph/value.hpp"

namespace tessera::spmd {

//! The reductions of `Context::allreduce`.
enum class ReduceOp { sum, min, max };

namespace detail {
class Namespace;
class Communicator;

//! The arithmetic types a communicator may reduce natively (MPI's built-in ops).
enum class NumberKind { boolean, i8, i16, i32, i64, u8, u16, u32, u64, f32, f64, long_double };

template <class T>
constexpr NumberKind number_kind() {
  if constexpr (std::is_same_v<T, bool>) {
    return NumberKind::boolean;
  } else if constexpr (std::is_floating_point_v<T>) {
    return sizeof(T) == 4 ? NumberKind::f32 : sizeof(T) == 8 ? NumberKind::f64 : NumberKind::long_double;
  } else if constexpr (std::is_signed_v<T>) {
    return sizeof(T) == 1   ? NumberKind::i8
           : sizeof(T) == 2 ? NumberKind::i16
           : sizeof(T) == 4 ? NumberKind::i32
                            : NumberKind::i64;
  } else {
    return sizeof(T) == 1   ? NumberKind::u8
           : sizeof(T) == 2 ? NumberKind::u16
           : sizeof(T) == 4 ? NumberKind::u32
                            : NumberKind::u64;
  }
}
}  // namespace detail

//! What an SPMD function sees of its engine: its rank, the cluster's size, its namespace and barriers.
class Context {
 public:
  //! Made by the engine that runs the function, not by users.
  Context(detail::Namespace& ns, detail::Communicator& comm, int rank);

  //! This engine's position among the engines of the apply, 0..size()-1 (its id
  //! when the view holds the whole cluster in order).
  int rank() const { return rank_; }
  //! How many engines run this apply.
  int size() const;
  //! The engine's id in its cluster.
  int engine_id() const;

  //! Waits until every engine of the apply has called barrier() as often as this one.
  void barrier() const;
  //! Every engine's `value`, in rank order, on every engine.
  std::vector<Value> allgather(Value value) const;
  //! `values[0] op values[1] op ...` in rank order, on every engine: every engine
  //! gets the same result, also for floating point.
  template <class T, class Op>
    requires std::is_invocable_r_v<T, Op&, const T&, const T&>
  T allreduce(const T& value, Op op) const {
    std::vector<Value> all = allgather(Value(value));
    T acc = all[0].as<T>();
    for (size_t i = 1; i < all.size(); ++i) acc = op(acc, all[i].as<T>());
    return acc;
  }
  //! allreduce with a sum, minimum or maximum of an arithmetic type. Engines that
  //! are MPI ranks use MPI's built-in operation (MPI_SUM, MPI_MIN, MPI_MAX; a sum
  //! of bools is MPI_LOR), whose order of a floating-point sum is MPI's.
  template <class T>
    requires std::is_arithmetic_v<T>
  T allreduce(const T& value, ReduceOp op) const {
    T native = value;
    if (reduce_natively(&native, detail::number_kind<T>(), op)) return native;
    return allreduce(value, [op](const T& a, const T& b) -> T {
      switch (op) {
        case ReduceOp::min: return b < a ? b : a;
        case ReduceOp::max: return a < b ? b : a;
        case ReduceOp::sum: break;
      }
      return static_cast<T>(a + b);
    });
  }

  //! The value of `name` in this engine's namespace; throws NameError when absent.
  const Value& get(const std::string& name) const;
  //! The value of `name` as a T; throws NameError or TypeError.
  template <class T>
  const T& get(const std::string& name) const {
    return get(name).as<T>();
  }
  //! Sets `name` in this engine's namespace (what ipyparallel's execute does with globals).
  void set(const std::string& name, Value value) const;

 private:
  bool reduce_natively(void* inout, detail::NumberKind kind, ReduceOp op) const;

  detail::Namespace* ns_;
  detail::Communicator* comm_;
  int rank_;
};

//! The context of the apply running on this thread; throws tessera::Error when
//! called outside a function run by BroadcastView::apply or execute.
const Context& context();

}  // namespace tessera::spmd
