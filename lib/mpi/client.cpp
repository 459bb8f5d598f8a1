// The client of an MPI cluster: requests out, answers and heartbeats in.
//
// Why one progress thread rather than each waiter receiving for itself: answers
// for many requests and many threads arrive on one communicator in an order no
// waiter knows in advance, and a lost rank is noticed only by someone who keeps
// listening while every user thread may be busy elsewhere. Sends are
// nonblocking (MPI_Isend), so a large push never makes apply() wait for an
// engine still running an earlier request.
#include "client.hpp"

#include <cstdio>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "tessera/graph/error.hpp"
#include "tessera/graph/wire.hpp"
#include "tessera/mpi/cluster.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::mpi::detail {
namespace {

using Bytes = std::shared_ptr<const std::vector<std::byte>>;

Bytes encode(ValueList list) { return std::make_shared<const std::vector<std::byte>>(to_wire(Value(std::move(list)))); }

ValueList header(Kind kind, int64_t seq, const std::string& method) {
  return ValueList{Value(static_cast<int64_t>(kind)), Value(seq), Value(method)};
}

// An engine's exception, made again on the client: tessera's own types as
// themselves (so that catch clauses and CompositeError's entries read as they do
// for local engines), any other as a RemoteException that names its type.
std::exception_ptr remake(const std::string& type, const std::string& message) {
  if (type == "tessera::spmd::NameError") return std::make_exception_ptr(spmd::NameError(message));
  if (type == "tessera::spmd::BarrierError") return std::make_exception_ptr(spmd::BarrierError(message));
  if (type == "tessera::spmd::TimeoutError") return std::make_exception_ptr(spmd::TimeoutError(message));
  if (type == "tessera::TypeError") return std::make_exception_ptr(TypeError(message));
  if (type == "tessera::Error") return std::make_exception_ptr(Error(message));
  return std::make_exception_ptr(spmd::RemoteException(type, message));
}

}  // namespace

Client::Client(MPI_Comm ctl, int engines, std::chrono::duration<double> lost_after)
    : ctl_(ctl),
      lost_after_(std::chrono::duration_cast<Clock::duration>(lost_after)),
      ranks_(static_cast<size_t>(engines)) {
  progress_ = std::thread([this] { progress(); });
}

Client::~Client() {
  quit_ = true;
  if (progress_.joinable()) progress_.join();
}

template <class Encode>
std::shared_ptr<const Job> Client::post(std::shared_ptr<Job> job, Encode message) {
  std::lock_guard<std::mutex> lock(mu_);
  if (lost_engine_ >= 0) {
    throw Error(absl::StrCat(job->method(), ": the MPI cluster lost engine ", lost_engine_, " (rank ",
                             lost_engine_ + 1, ") and takes no more requests"));
  }
  if (stopped_) throw Error(absl::StrCat(job->method(), ": the cluster is stopped; start a new Cluster to run more"));
  const int64_t seq = ++seq_;
  const std::vector<int>& ids = job->engine_ids();
  std::vector<Bytes> bytes(ids.size());
  // Encode every message before sending any: a Value without a wire form is an
  // error of this call, and no engine has seen half of it.
  for (size_t slot = 0; slot < ids.size(); ++slot) bytes[slot] = message(slot, seq);
  job->mark_submitted();
  const Clock::time_point now = Clock::now();
  for (size_t slot = 0; slot < ids.size(); ++slot) {
    Rank& rank = ranks_[static_cast<size_t>(ids[slot])];
    if (rank.pending.empty()) rank.last_heard = now;  // silence only counts while it owes answers
    rank.pending.push_back({job, slot, seq});
    send_locked(ids[slot], std::move(bytes[slot]));
  }
  return job;
}

void Client::send_locked(int engine, Bytes bytes) {
  if (bytes->size() > static_cast<size_t>(INT32_MAX)) {
    throw Error(absl::StrCat("a request of ", bytes->size(), " bytes exceeds MPI's limit of 2^31-1 bytes per message"));
  }
  Send send{MPI_REQUEST_NULL, std::move(bytes)};
  check(MPI_Isend(send.bytes->data(), static_cast<int>(send.bytes->size()), MPI_BYTE, engine + 1, kRequestTag, ctl_,
                  &send.request),
        "MPI_Isend of a request");
  sends_.push_back(std::move(send));
}

std::shared_ptr<const Job> Client::apply(const char* method, const std::vector<int>& targets, Callable callable,
                                         const std::string* registered, std::vector<ApplyArg> args) {
  if (registered == nullptr) {
    throw Error(absl::StrCat(method, ": the function '", *callable.name,
                             "' is not registered, and engines on other MPI ranks find functions by name; "
                             "register it at namespace scope with TESSERA_SPMD_REGISTER(",
                             *callable.name, ") (or spmd::register_function) in code that every rank runs"));
  }
  Bytes once;
  return post(std::make_shared<Job>(method, targets, Job::Work{}), [&](size_t, int64_t seq) {
    if (!once) {
      ValueList list = header(Kind::apply, seq, method);
      list.emplace_back(*registered);
      list.emplace_back(targets);
      ValueList wire_args;
      wire_args.reserve(args.size());
      for (const ApplyArg& a : args) {
        wire_args.emplace_back(ValueList{Value(a.is_reference), a.is_reference ? Value(a.reference) : a.literal});
      }
      list.emplace_back(std::move(wire_args));
      once = encode(std::move(list));
    }
    return once;
  });
}

std::shared_ptr<const Job> Client::assign(const char* method, const std::vector<int>& targets,
                                          const std::string& name, std::vector<Value> parts) {
  return post(std::make_shared<Job>(method, targets, Job::Work{}), [&](size_t slot, int64_t seq) {
    ValueList list = header(Kind::assign, seq, method);
    list.emplace_back(name);
    list.push_back(parts[slot]);
    return encode(std::move(list));
  });
}

std::shared_ptr<const Job> Client::assign_all(const std::vector<int>& targets, std::map<std::string, Value> ns) {
  Bytes once;
  return post(std::make_shared<Job>("push", targets, Job::Work{}), [&](size_t, int64_t seq) {
    if (!once) {
      ValueList list = header(Kind::assign_all, seq, "push");
      list.emplace_back(ns);
      once = encode(std::move(list));
    }
    return once;
  });
}

std::shared_ptr<const Job> Client::pull(const char* method, const std::vector<int>& targets,
                                        const std::string& name) {
  Bytes once;
  return post(std::make_shared<Job>(method, targets, Job::Work{}), [&](size_t, int64_t seq) {
    if (!once) {
      ValueList list = header(Kind::pull, seq, method);
      list.emplace_back(name);
      once = encode(std::move(list));
    }
    return once;
  });
}

void Client::progress() {
  Backoff backoff;
  for (;;) {
    int flag = 0;
    MPI_Status status;
    MPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, ctl_, &flag, &status);
    if (flag) {
      answer(receive(ctl_, status));
      backoff.reset();
      continue;
    }
    std::vector<Pending> failed;
    int lost = -1;
    bool done = false;
    {
      std::lock_guard<std::mutex> lock(mu_);
      std::erase_if(sends_, [](Send& s) {
        int complete = 0;
        MPI_Test(&s.request, &complete, MPI_STATUS_IGNORE);
        return complete != 0;
      });
      check_lost_locked(Clock::now(), failed, lost);
      bool idle = sends_.empty();
      for (const Rank& r : ranks_) idle = idle && r.pending.empty();
      // Sends to a lost rank never complete; nothing else is owed then.
      done = quit_.load() && (idle || lost_engine_ >= 0);
    }
    if (!failed.empty()) fail(std::move(failed), lost);
    if (done) return;
    backoff.pause();
  }
}

void Client::answer(const Message& m) {
  Pending p;
  {
    std::lock_guard<std::mutex> lock(mu_);
    Rank& rank = ranks_[static_cast<size_t>(m.source - 1)];
    rank.last_heard = Clock::now();
    // A heartbeat, or an answer to a request already failed when a rank was lost.
    if (m.tag == kHeartbeatTag || rank.pending.empty()) return;
    p = std::move(rank.pending.front());
    rank.pending.pop_front();
  }
  Value value;
  std::exception_ptr error;
  try {
    Value decoded = decode(m, absl::StrCat("an answer from rank ", m.source));
    const ValueList& list = decoded.as<ValueList>();
    if (list.size() < 3 || list[0].as<int64_t>() != p.seq) {
      throw Error(absl::StrCat("rank ", m.source, " answered out of order (expected request ", p.seq, ")"));
    }
    if (list[1].as<bool>()) {
      value = list[2];
    } else {
      error = remake(list[2].as<std::string>(), list[3].as<std::string>());
    }
  } catch (...) {
    error = std::current_exception();
  }
  p.job->finish(p.slot, std::move(value), std::move(error));
}

void Client::check_lost_locked(Clock::time_point now, std::vector<Pending>& failed, int& lost) {
  if (lost_engine_ >= 0) return;
  for (size_t i = 0; i < ranks_.size(); ++i) {
    if (ranks_[i].pending.empty() || now - ranks_[i].last_heard < lost_after_) continue;
    lost = lost_engine_ = static_cast<int>(i);
    // Every pending result fails: the others may wait for the lost rank (in a
    // collective, or in the notices that end an apply) and never answer.
    for (Rank& r : ranks_) {
      failed.insert(failed.end(), std::make_move_iterator(r.pending.begin()), std::make_move_iterator(r.pending.end()));
      r.pending.clear();
    }
    return;
  }
}

void Client::fail(std::vector<Pending> failed, int lost) {
  const double seconds = std::chrono::duration<double>(lost_after_).count();
  for (Pending& p : failed) {
    const int engine = p.job->engine_ids()[p.slot];
    std::exception_ptr error =
        engine == lost
            ? std::make_exception_ptr(RankLostError(absl::StrFormat(
                  "engine %d (MPI rank %d) was lost: it sent nothing for %g s while it had requests to run "
                  "(killed or crashed?)",
                  engine, engine + 1, seconds)))
            : std::make_exception_ptr(Error(absl::StrFormat(
                  "abandoned: engine %d (MPI rank %d) of the cluster was lost while this request ran", lost,
                  lost + 1)));
    p.job->finish(p.slot, Value(), std::move(error));
  }
}

void Client::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!stopped_) {
      stopped_ = true;
      if (lost_engine_ < 0) {
        for (size_t i = 0; i < ranks_.size(); ++i) {
          send_locked(static_cast<int>(i), encode(ValueList{Value(static_cast<int64_t>(Kind::stop)), Value(++seq_)}));
        }
      }
    }
  }
  quit_ = true;
  if (progress_.joinable() && progress_.get_id() != std::this_thread::get_id()) progress_.join();
  if (lost_engine_ >= 0) {
    // MPI cannot finalize with a dead rank; the error has reached the caller already.
    std::fprintf(stderr, "tessera::mpi::Cluster: engine %d (MPI rank %d) was lost; ending the job (MPI_Abort)\n",
                 lost_engine_, lost_engine_ + 1);
    std::fflush(stderr);
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
}

}  // namespace tessera::mpi::detail
