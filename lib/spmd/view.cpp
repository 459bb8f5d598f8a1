// BroadcastView: hands apply, push, pull, scatter and gather to its cluster's backend.
#include "tessera/spmd/view.hpp"

#include <absl/strings/str_cat.h>

#include "tessera/spmd/detail/backend.hpp"

namespace tessera::spmd {

BroadcastView::BroadcastView(std::shared_ptr<detail::ClusterState> cluster, std::vector<int> targets)
    : cluster_(std::move(cluster)), targets_(std::move(targets)) {}

BroadcastView detail::make_view(std::shared_ptr<ClusterState> cluster, std::vector<int> targets) {
  return BroadcastView(std::move(cluster), std::move(targets));
}

void BroadcastView::throw_arity(const std::string& name, const TypeError& e) {
  throw TypeError(absl::StrCat(name, ": ", e.what()));
}

bool BroadcastView::by_name() const { return cluster_->by_name(); }

std::shared_ptr<const detail::Job> BroadcastView::submit_raw(const char* method, Callable callable,
                                                             const std::string* registered,
                                                             std::vector<detail::ApplyArg> args) const {
  return cluster_->apply(method, targets_, std::move(callable), registered, std::move(args));
}

std::shared_ptr<const detail::Job> BroadcastView::submit_parts(const char* method, const std::string& name,
                                                               std::vector<Value> parts) const {
  return cluster_->assign(method, targets_, name, std::move(parts));
}

std::shared_ptr<const detail::Job> BroadcastView::pull_job(const char* method, const std::string& name) const {
  return cluster_->pull(method, targets_, name);
}

AsyncResult<void> BroadcastView::push(const std::string& name, Value value) const {
  return AsyncResult<void>(cluster_->assign_all(targets_, {{name, std::move(value)}}));
}

AsyncResult<void> BroadcastView::push(const std::map<std::string, Value>& ns) const {
  return AsyncResult<void>(cluster_->assign_all(targets_, ns));
}

const NameProxy& NameProxy::operator=(Value value) const {
  view_->push(name_, std::move(value)).get();
  return *this;
}

}  // namespace tessera::spmd
