// Cluster: local engines, and the requests a view sends them as Jobs.
#include "tessera/spmd/cluster.hpp"

#include <numeric>

#include <absl/container/flat_hash_set.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>

#include "engine.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::spmd {

namespace detail {

std::shared_ptr<const Job> LocalClusterState::apply(const char* method, const std::vector<int>& targets,
                                                    Callable callable, const std::string* /*registered*/,
                                                    std::vector<ApplyArg> args) {
  auto comm = std::make_shared<LocalCommunicator>(targets);
  auto work = [fn = std::move(callable.fn), name = callable.name, args = std::move(args), comm](
                  Engine& engine, size_t slot) -> Value {
    ContextScope scope(engine, *comm, static_cast<int>(slot));
    absl::InlinedVector<Value, 4> values;
    values.reserve(args.size());
    for (const ApplyArg& a : args) values.push_back(a.is_reference ? engine.lookup(a.reference) : a.literal);
    return invoke_apply(fn, *name, std::span(values.data(), values.size()));
  };
  return submit(std::make_shared<Job>(method, targets, std::move(work)));
}

std::shared_ptr<const Job> LocalClusterState::assign(const char* method, const std::vector<int>& targets,
                                                     const std::string& name, std::vector<Value> parts) {
  return submit(std::make_shared<Job>(
      method, targets, [name, parts = std::move(parts)](Engine& engine, size_t slot) -> Value {
        engine.assign(name, parts[slot]);
        return Value();
      }));
}

std::shared_ptr<const Job> LocalClusterState::assign_all(const std::vector<int>& targets,
                                                         std::map<std::string, Value> ns) {
  return submit(std::make_shared<Job>("push", targets, [ns = std::move(ns)](Engine& engine, size_t) -> Value {
    for (const auto& [name, value] : ns) engine.assign(name, value);
    return Value();
  }));
}

std::shared_ptr<const Job> LocalClusterState::pull(const char* method, const std::vector<int>& targets,
                                                   const std::string& name) {
  return submit(std::make_shared<Job>(method, targets,
                                      [name](Engine& engine, size_t) -> Value { return engine.lookup(name); }));
}

}  // namespace detail

Cluster::Cluster(int n) : size_(n), state_(std::make_shared<detail::LocalClusterState>(n)) {}

Cluster::~Cluster() { stop(); }

std::vector<int> Cluster::ids() const {
  std::vector<int> ids(static_cast<size_t>(size_));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

BroadcastView Cluster::broadcast_view() const { return detail::make_view(state_, ids()); }

BroadcastView Cluster::broadcast_view(std::vector<int> targets) const {
  detail::check_targets(targets, size_);
  return detail::make_view(state_, std::move(targets));
}

void Cluster::stop() { state_->stop(); }

namespace detail {

void check_targets(const std::vector<int>& targets, int size) {
  if (targets.empty()) throw Error("broadcast_view: the list of engine ids is empty; a view needs at least one engine");
  absl::flat_hash_set<int> seen;
  for (int id : targets) {
    if (id < 0 || id >= size) {
      throw Error(absl::StrCat("broadcast_view: engine id ", id, " is out of range: the cluster has ", size,
                               " engines (ids 0..", size - 1, ")"));
    }
    if (!seen.insert(id).second) throw Error(absl::StrCat("broadcast_view: engine id ", id, " is listed twice"));
  }
}

}  // namespace detail
}  // namespace tessera::spmd
