// An engine rank: requests in order from the client, answers back, a heartbeat
// while it works.
//
// Why a heartbeat thread rather than answering pings from the serve loop: the
// loop is busy inside the user's function for as long as that runs; only another
// thread can tell the client this rank is alive. It stays quiet while the rank is
// idle, so idle engines cost the client nothing.
#include "serve.hpp"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>

#include "collectives.hpp"
#include "protocol.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/wire.hpp"
#include "tessera/spmd/detail/backend.hpp"
#include "tessera/spmd/error.hpp"
#include "tessera/spmd/registry.hpp"

namespace tessera::mpi::detail {
namespace {

constexpr int kGroupTag = 7;         // MPI_Comm_create_group's, on the peer communicator
constexpr int kNoticeTagBase = 100;  // an apply's notices: kNoticeTagBase + seq % kNoticeTags
constexpr int kNoticeTags = 30000;   // MPI guarantees tags up to 32767

class Server {
 public:
  Server(MPI_Comm ctl, MPI_Comm peer, std::chrono::duration<double> lost_after, int engine_id)
      : ctl_(ctl), peer_(peer), ns_(engine_id), interval_(lost_after / 10) {
    heartbeat_ = std::thread([this] { heartbeat(); });
  }
  ~Server() {
    {
      std::lock_guard<std::mutex> lock(mu_);
      quit_ = true;
    }
    cv_.notify_all();
    heartbeat_.join();
  }

  void run() {
    Backoff backoff;
    for (;;) {
      int flag = 0;
      MPI_Status status;
      MPI_Iprobe(0, kRequestTag, ctl_, &flag, &status);
      if (!flag) {
        backoff.pause();
        continue;
      }
      backoff.reset();
      Message m = receive(ctl_, status);
      busy_ = true;
      if (!run_one(m)) return;
      busy_ = false;
    }
  }

 private:
  // Runs one request and answers it; false on stop.
  bool run_one(const Message& m) {
    int64_t seq = -1;
    std::string method = "request";
    Value result;
    std::exception_ptr error;
    try {
      Value decoded = decode(m, "a request from rank 0");
      const ValueList& request = decoded.as<ValueList>();
      const auto kind = static_cast<Kind>(request.at(0).as<int64_t>());
      seq = request.at(1).as<int64_t>();
      if (kind == Kind::stop) return false;
      method = request.at(2).as<std::string>();
      result = handle(kind, request, seq);
      if (method == "execute") result = Value();  // its result is discarded; it need not cross
    } catch (...) {
      error = std::current_exception();
    }
    std::vector<std::byte> bytes;
    if (!error) {
      try {
        bytes = to_wire(Value(ValueList{Value(seq), Value(true), std::move(result)}));
      } catch (...) {
        error = std::current_exception();  // a result without a wire form
      }
    }
    if (error) {
      spmd::RemoteError r = spmd::make_remote_error(ns_.id(), method, error);
      bytes = to_wire(Value(ValueList{Value(seq), Value(false), Value(r.type), Value(r.message)}));
    }
    check(MPI_Send(bytes.data(), static_cast<int>(bytes.size()), MPI_BYTE, 0, kReplyTag, ctl_),
          "MPI_Send of an answer");
    return true;
  }

  Value handle(Kind kind, const ValueList& request, int64_t seq) {
    switch (kind) {
      case Kind::apply: return apply(request, seq);
      case Kind::assign: ns_.assign(request.at(3).as<std::string>(), request.at(4)); return Value();
      case Kind::assign_all:
        for (const auto& [name, value] : request.at(3).as<std::map<std::string, Value>>()) ns_.assign(name, value);
        return Value();
      case Kind::pull: return ns_.lookup(request.at(3).as<std::string>());
      case Kind::stop: break;
    }
    throw Error(absl::StrCat("engine ", ns_.id(), ": a request of unknown kind ", static_cast<int64_t>(kind)));
  }

  Value apply(const ValueList& request, int64_t seq) {
    const auto& name = request.at(3).as<std::string>();
    const auto& targets = request.at(4).as<std::vector<int>>();
    const auto& args = request.at(5).as<ValueList>();
    const int slot = static_cast<int>(std::find(targets.begin(), targets.end(), ns_.id()) - targets.begin());
    // Every engine of the apply makes the group (collectively) before anything
    // that may fail, so that none waits in it for one that raised.
    MPI_Comm group = targets.size() > 1 ? group_of(targets) : MPI_COMM_NULL;
    MpiCommunicator comm(group, peer_, kNoticeTagBase + static_cast<int>(seq % kNoticeTags), targets, slot);
    Value result;
    std::exception_ptr error;
    try {
      spmd::detail::ContextScope scope(ns_, comm, slot);
      RawFn fn = spmd::detail::registered_factory(name)(args.size());
      absl::InlinedVector<Value, 4> values;
      for (const Value& a : args) {
        const auto& pair = a.as<ValueList>();
        values.push_back(pair.at(0).as<bool>() ? ns_.lookup(pair.at(1).as<std::string>()) : pair.at(1));
      }
      result = spmd::detail::invoke_apply(fn, name, std::span(values.data(), values.size()));
    } catch (...) {
      error = std::current_exception();
    }
    if (!comm.finish()) groups_.erase(targets);  // steps left pending: the next apply makes a new one
    if (error) std::rethrow_exception(error);
    return result;
  }

  MPI_Comm group_of(const std::vector<int>& targets) {
    auto it = groups_.find(targets);
    if (it != groups_.end()) return it->second;
    MPI_Group world, members;
    MPI_Comm_group(peer_, &world);
    std::vector<int> ranks(targets.size());
    for (size_t i = 0; i < targets.size(); ++i) ranks[i] = targets[i] + 1;
    MPI_Group_incl(world, static_cast<int>(ranks.size()), ranks.data(), &members);
    MPI_Comm comm = MPI_COMM_NULL;
    check(MPI_Comm_create_group(peer_, members, kGroupTag, &comm), "MPI_Comm_create_group");
    MPI_Group_free(&members);
    MPI_Group_free(&world);
    MPI_Comm_set_errhandler(comm, MPI_ERRORS_RETURN);
    groups_.emplace(targets, comm);
    return comm;
  }

  void heartbeat() {
    std::unique_lock<std::mutex> lock(mu_);
    while (!cv_.wait_for(lock, interval_, [this] { return quit_; })) {
      if (busy_.load()) MPI_Send(nullptr, 0, MPI_BYTE, 0, kHeartbeatTag, ctl_);
    }
  }

  MPI_Comm ctl_;
  MPI_Comm peer_;
  spmd::detail::Namespace ns_;
  std::map<std::vector<int>, MPI_Comm> groups_;  // one communicator per set of engines
  std::atomic<bool> busy_{false};
  std::chrono::duration<double> interval_;
  std::mutex mu_;
  std::condition_variable cv_;
  bool quit_ = false;
  std::thread heartbeat_;
};

}  // namespace

void serve(MPI_Comm ctl, MPI_Comm peer, std::chrono::duration<double> lost_after) {
  int rank = 0;
  MPI_Comm_rank(ctl, &rank);
  Server server(ctl, peer, lost_after, rank - 1);
  server.run();
}

}  // namespace tessera::mpi::detail
