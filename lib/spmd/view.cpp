// BroadcastView: turns apply, push, pull, scatter and gather into Jobs.
#include "tessera/spmd/view.hpp"

#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>

#include "engine.hpp"

namespace tessera::spmd {

BroadcastView::BroadcastView(std::shared_ptr<detail::ClusterState> cluster, std::vector<int> targets)
    : cluster_(std::move(cluster)), targets_(std::move(targets)) {}

void BroadcastView::throw_arity(const std::string& name, const TypeError& e) {
  throw TypeError(absl::StrCat(name, ": ", e.what()));
}

std::shared_ptr<const detail::Job> BroadcastView::submit_raw(const char* method, Callable callable,
                                                             std::vector<detail::ApplyArg> args) const {
  auto comm = std::make_shared<detail::Communicator>(targets_);
  auto work = [fn = std::move(callable.fn), name = callable.name, args = std::move(args), comm](
                  detail::Engine& engine, size_t slot) -> Value {
    detail::ContextScope scope(engine, *comm, static_cast<int>(slot));
    absl::InlinedVector<Value, 4> values;
    values.reserve(args.size());
    for (const detail::ApplyArg& a : args) values.push_back(a.is_reference ? engine.lookup(a.reference) : a.literal);
    try {
      return fn(absl::MakeConstSpan(values.data(), values.size()));
    } catch (const ArgumentTypeError& e) {
      // As the schedulers do: a TypeError that names the function.
      throw TypeError(absl::StrCat(*name, ": ", e.what()));
    }
  };
  auto job = std::make_shared<detail::Job>(method, targets_, std::move(work));
  cluster_->submit(job);
  return job;
}

std::shared_ptr<const detail::Job> BroadcastView::submit_parts(const char* method, const std::string& name,
                                                               std::vector<Value> parts) const {
  auto job = std::make_shared<detail::Job>(
      method, targets_, [name, parts = std::move(parts)](detail::Engine& engine, size_t slot) -> Value {
        engine.assign(name, parts[slot]);
        return Value();
      });
  cluster_->submit(job);
  return job;
}

std::shared_ptr<const detail::Job> BroadcastView::pull_job(const char* method, const std::string& name) const {
  auto job = std::make_shared<detail::Job>(
      method, targets_, [name](detail::Engine& engine, size_t) -> Value { return engine.lookup(name); });
  cluster_->submit(job);
  return job;
}

AsyncResult<void> BroadcastView::push(const std::string& name, Value value) const {
  return AsyncResult<void>(submit_parts("push", name, std::vector<Value>(targets_.size(), value)));
}

AsyncResult<void> BroadcastView::push(const std::map<std::string, Value>& ns) const {
  auto job = std::make_shared<detail::Job>("push", targets_, [ns](detail::Engine& engine, size_t) -> Value {
    for (const auto& [name, value] : ns) engine.assign(name, value);
    return Value();
  });
  cluster_->submit(job);
  return AsyncResult<void>(job);
}

const NameProxy& NameProxy::operator=(Value value) const {
  view_->push(name_, std::move(value)).get();
  return *this;
}

}  // namespace tessera::spmd
