#include "tessera/spmd/cluster.hpp"

#include <numeric>

#include <absl/container/flat_hash_set.h>
#include <absl/strings/str_cat.h>

#include "engine.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::spmd {

Cluster::Cluster(int n) : size_(n), state_(std::make_shared<detail::ClusterState>(n)) {}

Cluster::~Cluster() { stop(); }

std::vector<int> Cluster::ids() const {
  std::vector<int> ids(static_cast<size_t>(size_));
  std::iota(ids.begin(), ids.end(), 0);
  return ids;
}

BroadcastView Cluster::broadcast_view() const { return BroadcastView(state_, ids()); }

BroadcastView Cluster::broadcast_view(std::vector<int> targets) const {
  if (targets.empty()) throw Error("broadcast_view: the list of engine ids is empty; a view needs at least one engine");
  absl::flat_hash_set<int> seen;
  for (int id : targets) {
    if (id < 0 || id >= size_) {
      throw Error(absl::StrCat("broadcast_view: engine id ", id, " is out of range: the cluster has ", size_,
                               " engines (ids 0..", size_ - 1, ")"));
    }
    if (!seen.insert(id).second) throw Error(absl::StrCat("broadcast_view: engine id ", id, " is listed twice"));
  }
  return BroadcastView(state_, std::move(targets));
}

void Cluster::stop() { state_->stop(); }

}  // namespace tessera::spmd
