// tessera/spmd/detail/backend.hpp — what a BroadcastView talks to (private).
//
// One BroadcastView serves two kinds of engines: threads of this process (Cluster,
// lib/spmd) and MPI ranks of one mpirun program (tessera::mpi::Cluster, in
// libtessera-mpi). Each is a ClusterState: it turns a view's requests into Jobs
// whose slots complete when its engines answer. The Namespace and Communicator
// below are what an engine of either kind hands to spmd::Context.
#pragma once

#include <map>
#include <memory>
#include <string>
#include <vector>

#include <unordered_map>

#include "tessera/graph/callable.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/spmd/context.hpp"
#include "tessera/spmd/detail/job.hpp"

namespace tessera::spmd::detail {

struct ApplyArg;

class ClusterState {
 public:
  virtual ~ClusterState() = default;
  //! True when engines are other processes, which find an apply's function by its
  //! registered name (tessera/spmd/registry.hpp) rather than by the callable.
  virtual bool by_name() const = 0;
  //! Calls the function on every engine of `targets`; `registered` is its
  //! registered name (null when unregistered; by_name() backends then throw).
  virtual std::shared_ptr<const Job> apply(const char* method, const std::vector<int>& targets, Callable callable,
                                           const std::string* registered, std::vector<ApplyArg> args) = 0;
  //! Sets `name` to `parts[slot]` on engine `targets[slot]`.
  virtual std::shared_ptr<const Job> assign(const char* method, const std::vector<int>& targets,
                                            const std::string& name, std::vector<Value> parts) = 0;
  //! Sets every name of `ns` on every engine of `targets`.
  virtual std::shared_ptr<const Job> assign_all(const std::vector<int>& targets,
                                                std::map<std::string, Value> ns) = 0;
  //! Each engine's value of `name`.
  virtual std::shared_ptr<const Job> pull(const char* method, const std::vector<int>& targets,
                                          const std::string& name) = 0;
  virtual void stop() = 0;
};

//! Throws tessera::Error unless `targets` is a non-empty list of distinct ids in 0..size-1.
void check_targets(const std::vector<int>& targets, int size);

//! One engine's namespace of named Values and its id; touched only by the thread
//! running the engine's requests, so it needs no lock.
class Namespace {
 public:
  explicit Namespace(int id) : id_(id) {}
  int id() const { return id_; }
  //! The value of `name`; throws NameError naming the engine.
  const Value& lookup(const std::string& name) const;
  void assign(const std::string& name, Value value) { ns_[name] = std::move(value); }

 private:
  int id_;
  std::unordered_map<std::string, Value> ns_;
};

//! The engines of one apply, behind the collectives of spmd::Context. Ranks are
//! positions among them. A rank that leaves the apply (returns or raises) before
//! the others finish a collective makes that collective raise BarrierError.
class Communicator {
 public:
  virtual ~Communicator() = default;
  virtual int size() const = 0;
  virtual int engine_id(int rank) const = 0;
  virtual void barrier(int rank) = 0;
  virtual std::vector<Value> allgather(int rank, Value value) = 0;
  //! Reduces `*inout` (of `kind`) with a native operation; false when there is
  //! none, and the caller reduces an allgather instead.
  virtual bool allreduce(int /*rank*/, void* /*inout*/, NumberKind /*kind*/, ReduceOp /*op*/) { return false; }
  //! `rank` returned from the SPMD function (`failed`: by an exception).
  virtual void leave(int rank, bool failed) = 0;
};

//! Calls an apply's function `fn`, named `name`, with its evaluated arguments; an
//! argument of the wrong type is a TypeError naming the function, as the schedulers say it.
Value invoke_apply(const RawFn& fn, const std::string& name, std::span<const Value> args);

//! What BarrierError says when engine `engine_id` left an apply (`by_error`: by
//! raising) before reaching a collective the others wait at.
std::string barrier_broken_message(int engine_id, bool by_error);

//! Makes `Context(ns, comm, rank)` the thread's context() for its lifetime; on
//! destruction the rank leaves the communicator (as failed when unwinding).
class ContextScope {
 public:
  ContextScope(Namespace& ns, Communicator& comm, int rank);
  ~ContextScope();
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  Context context_;
  Communicator& comm_;
  const Context* previous_;
  int uncaught_;
};

}  // namespace tessera::spmd::detail
