// The per-apply context and its collectives.
#include "tessera/spmd/context.hpp"

#include <exception>

#include <absl/strings/str_cat.h>

#include "engine.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::spmd {
namespace {

thread_local const Context* current_context = nullptr;

}  // namespace

Context::Context(detail::Namespace& ns, detail::Communicator& comm, int rank) : ns_(&ns), comm_(&comm), rank_(rank) {}

int Context::size() const { return comm_->size(); }
int Context::engine_id() const { return ns_->id(); }
void Context::barrier() const { comm_->barrier(rank_); }
std::vector<Value> Context::allgather(Value value) const { return comm_->allgather(rank_, std::move(value)); }
bool Context::reduce_natively(void* inout, detail::NumberKind kind, ReduceOp op) const {
  return comm_->allreduce(rank_, inout, kind, op);
}
const Value& Context::get(const std::string& name) const { return ns_->lookup(name); }
void Context::set(const std::string& name, Value value) const { ns_->assign(name, std::move(value)); }

const Context& context() {
  if (current_context == nullptr) {
    throw Error(
        "spmd::context() was called outside an SPMD function: only code run by "
        "BroadcastView::apply or execute has one");
  }
  return *current_context;
}

namespace detail {

const Value& Namespace::lookup(const std::string& name) const {
  auto it = ns_.find(name);
  if (it == ns_.end()) {
    throw NameError(absl::StrCat("name '", name, "' is not defined on engine ", id_));
  }
  return it->second;
}

ContextScope::ContextScope(Namespace& ns, Communicator& comm, int rank)
    : context_(ns, comm, rank),
      comm_(comm),
      previous_(current_context),
      uncaught_(std::uncaught_exceptions()) {
  current_context = &context_;
}

ContextScope::~ContextScope() {
  current_context = previous_;
  comm_.leave(context_.rank(), std::uncaught_exceptions() > uncaught_);
}

LocalCommunicator::LocalCommunicator(std::vector<int> ids) : ids_(std::move(ids)), slots_(ids_.size()) {}

Value invoke_apply(const RawFn& fn, const std::string& name, std::span<const Value> args) {
  try {
    return fn(args);
  } catch (const ArgumentTypeError& e) {
    throw TypeError(absl::StrCat(name, ": ", e.what()));
  }
}

std::string barrier_broken_message(int engine_id, bool by_error) {
  return absl::StrCat("barrier broken: engine ", engine_id,
                      by_error ? " raised an error before reaching it"
                               : " returned from the SPMD function without reaching it (every engine of "
                                 "an apply must make the same collective calls)");
}

void LocalCommunicator::check_usable() const {
  if (broken_rank_ < 0) return;
  throw BarrierError(barrier_broken_message(ids_[static_cast<size_t>(broken_rank_)], broken_by_error_));
}

// Called with the lock held. Returns when every rank has arrived; throws
// BarrierError when the communicator breaks first.
void LocalCommunicator::arrive_and_wait(std::unique_lock<std::mutex>& lock) {
  check_usable();
  unsigned long generation = generation_;
  if (++arrived_ == size()) {
    arrived_ = 0;
    ++generation_;
    cv_.notify_all();
    return;
  }
  cv_.wait(lock, [&] { return generation_ != generation || broken_rank_ >= 0; });
  if (generation_ == generation) check_usable();
}

void LocalCommunicator::barrier(int /*rank*/) {
  std::unique_lock<std::mutex> lock(mu_);
  arrive_and_wait(lock);
}

std::vector<Value> LocalCommunicator::allgather(int rank, Value value) {
  std::unique_lock<std::mutex> lock(mu_);
  check_usable();
  slots_[static_cast<size_t>(rank)] = std::move(value);
  arrive_and_wait(lock);
  std::vector<Value> all = slots_;
  // A second rendezvous: nobody may overwrite a slot before every rank has read it.
  arrive_and_wait(lock);
  return all;
}

void LocalCommunicator::leave(int rank, bool failed) {
  std::lock_guard<std::mutex> lock(mu_);
  // Once a rank has left, no collective can complete any more.
  if (broken_rank_ < 0 && size() > 1) {
    broken_rank_ = rank;
    broken_by_error_ = failed;
    if (arrived_ > 0) cv_.notify_all();
  }
}

}  // namespace detail
}  // namespace tessera::spmd
