// tessera/spmd/cluster.hpp — n local engines, each a thread with its own namespace.
//
// A Cluster is the local counterpart of an ipyparallel cluster: engines with ids
// 0..n-1, each running requests one after another on its own thread, against its
// own namespace of named tessera::Values. Every engine has a thread of its own
// (not a slot in a shared pool), so all engines of an apply run at the same time
// and a barrier among them cannot deadlock, whatever n is.
//
// stop() (or the destructor) lets every engine finish the requests already sent
// to it, then joins every engine thread; views used after that raise Error.
//
// @code
//   tessera::spmd::Cluster cluster(8);
//   auto view = cluster.broadcast_view();          // all engines
//   auto half = cluster.broadcast_view({0, 1, 2, 3});
//   view.apply([] { return tessera::spmd::context().rank(); }).get();   // {0, ..., 7}
// @endcode
//
// Thread-safe: broadcast_view, ids and size may be called from any thread; stop
// must not be called from an engine (it would wait for itself).
#pragma once

#include <memory>
#include <vector>

#include "tessera/spmd/view.hpp"

namespace tessera::spmd {

//! n engines on threads of this process, each with its own namespace; broadcast_view() sends them work.
class Cluster {
 public:
  //! Starts `n` engines (ids 0..n-1). Throws tessera::Error when n < 1.
  explicit Cluster(int n);
  //! stop().
  ~Cluster();
  Cluster(const Cluster&) = delete;
  Cluster& operator=(const Cluster&) = delete;

  //! The number of engines.
  int size() const { return size_; }
  //! {0, 1, ..., size()-1}.
  std::vector<int> ids() const;
  //! A view on every engine, in id order.
  BroadcastView broadcast_view() const;
  //! A view on `targets`, results in that order. Throws tessera::Error when the list
  //! is empty, holds an id twice or an id that is not in 0..size()-1.
  BroadcastView broadcast_view(std::vector<int> targets) const;
  //! Lets every engine finish what it was sent, then joins all engine threads.
  //! Idempotent; later requests raise Error.
  void stop();

 private:
  int size_;
  std::shared_ptr<detail::ClusterState> state_;
};

}  // namespace tessera::spmd
