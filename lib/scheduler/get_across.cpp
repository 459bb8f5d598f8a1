// A run across ranks, in three parts:
//
//   routes    every rank places the same Plan (place()) and derives, for each
//             task, the ranks other than its owner that need its result: the
//             owners of its readers, and rank 0 (or every rank) for a requested
//             key. A rank runs its own tasks; each result it needs from another
//             rank is an Inbox key of its local run, delivered, not computed.
//   the run   the local Plan runs on the caller's thread (get or get_sync)
//             while a thread of the run's own moves results, so that
//             computing goes on while results travel. A posttask hook hands
//             each finished result that other ranks need to the loop below.
//   the loop  that thread makes every Communicator call: it serializes
//             each outgoing result once (tessera/graph/wire.hpp) and sends it to
//             each rank that needs it, delivers what arrives into the Inbox,
//             and relays errors. When its run ended, a rank tells every peer
//             "done" and keeps receiving until every peer said so and its own
//             sends were taken: messages from one rank arrive in order, so after
//             a peer's "done" nothing more comes from it, and no rank leaves
//             while another still sends to it -- also after an error.
//
// Messages: kResult carries the task's id in the Plan (the same on every rank:
// every rank built the same Plan) and the value's wire form; kError the failed
// task's key, function and message; kDone nothing.
#include "across.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/wire.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/inbox.hpp"
#include "tessera/scheduler/placement.hpp"

namespace tessera::detail {
namespace {

enum Tag : int { kResult = 1, kError = 2, kDone = 3 };

using Clock = std::chrono::steady_clock;

// A result other ranks need: its id in the Plan and the ranks it goes to.
struct Route {
  uint32_t id;
  std::vector<int> to;
};

// What this rank runs, sends and receives.
struct Routes {
  std::vector<Key> request;                  // the local run's keys: the caller's (if it returns them), then `out`'s
  size_t returned = 0;                       // how many of `request` are the caller's keys
  std::vector<Key> inbox;                    // results computed elsewhere that this rank needs
  absl::flat_hash_map<Key, Route> out;       // own results other ranks need, by key
};

Routes route(const Plan& plan, int rank, int size, bool result_on_every_rank) {
  const std::vector<int> owner = place(plan, size);
  Routes r;
  const bool returns = rank == 0 || result_on_every_rank;
  if (returns) {
    r.request = plan.keys().flatten();
    r.returned = r.request.size();
  }
  std::vector<int> to;
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    to.clear();
    for (uint32_t d : plan.dependents(t)) to.push_back(owner[d]);
    if (plan.is_requested(t)) {
      if (result_on_every_rank) {
        for (int q = 0; q < size; ++q) to.push_back(q);
      } else {
        to.push_back(0);
      }
    }
    std::sort(to.begin(), to.end());
    to.erase(std::unique(to.begin(), to.end()), to.end());
    to.erase(std::remove(to.begin(), to.end(), owner[t]), to.end());
    if (owner[t] == rank) {
      if (!to.empty()) {
        r.request.push_back(plan.key(t));
        r.out.emplace(plan.key(t), Route{t, to});
      }
    } else if (std::binary_search(to.begin(), to.end(), rank)) {
      r.inbox.push_back(plan.key(t));
    }
  }
  return r;
}

// The Plan's cached values (nodes past the tasks that are tasks in the graph),
// so that the local Plan does not compute them either.
Cache cached_values(const Plan& plan) {
  Cache cache;
  for (uint32_t id = plan.num_tasks(); id < plan.size(); ++id) {
    if (!plan.graph().node(plan.graph_id(id)).is_literal()) cache.emplace(plan.key(id), plan.known(id));
  }
  return cache;
}

// The failed task of another rank, as its kError message carries it.
struct RemoteError {
  int rank = -1;
  bool task = false;  // a TaskError (else another error, `message` its what())
  std::string key_name, function, message;
  std::vector<int64_t> key_index;
};

// The message's fields in their Spillable forms (tessera/graph/spill.hpp).
void put_string(SpillWriter& w, std::string_view s) { Spillable<std::string>::serialize(std::string(s), w); }
std::string get_string(SpillReader& r) { return Spillable<std::string>::deserialize(r); }
using Indices = std::vector<int64_t>;  // a key's

std::vector<std::byte> encode_error(const std::exception_ptr& error) {
  BytesWriter w;
  try {
    std::rethrow_exception(error);
  } catch (const TaskError& e) {
    w.put<uint8_t>(1);
    put_string(w, e.key().name());
    Spillable<Indices>::serialize(Indices(e.key().index().begin(), e.key().index().end()), w);
    put_string(w, e.function());
    put_string(w, e.message());
  } catch (const std::exception& e) {
    w.put<uint8_t>(0);
    put_string(w, e.what());
  } catch (...) {
    w.put<uint8_t>(0);
    put_string(w, "failed (an exception that is not a std::exception)");
  }
  return std::move(w.bytes());
}

RemoteError decode_error(const Message& m) {
  auto holder = std::make_shared<std::vector<std::byte>>(m.bytes);
  BytesReader r(std::shared_ptr<const std::byte>(holder, holder->data()), holder->size(),
                absl::StrCat("an error from rank ", m.source));
  RemoteError e;
  e.rank = m.source;
  e.task = r.get<uint8_t>() == 1;
  if (!e.task) {
    e.message = get_string(r);
    return e;
  }
  e.key_name = get_string(r);
  e.key_index = Spillable<Indices>::deserialize(r);
  e.function = get_string(r);
  e.message = get_string(r);
  return e;
}

// The error every rank throws for a failure on rank `e.rank`.
std::exception_ptr rank_error(const RemoteError& e) {
  const std::string where = absl::StrCat("on rank ", e.rank, ": ", e.message);
  if (!e.task) return std::make_exception_ptr(Error(where));
  return std::make_exception_ptr(
      TaskError(Key(e.key_name, e.key_index), e.function, std::make_exception_ptr(Error(where))));
}

// The network thread of a run across ranks: all Communicator calls.
class Exchange {
 public:
  Exchange(const Plan& plan, Communicator& comm, Routes& routes, Inbox& inbox)
      : plan_(plan), comm_(comm), routes_(routes), inbox_(inbox) {}

  // The hooks of the local run: results other ranks need go to the queue; the
  // count of running tasks tells the loop when the rank only waits.
  Callbacks hooks() {
    Callbacks cb;
    cb.pretask = [this](const RunState&, uint32_t, int) { running_.fetch_add(1, std::memory_order_relaxed); };
    cb.posttask = [this](const RunState& state, uint32_t task, const Value& result, int) {
      running_.fetch_sub(1, std::memory_order_relaxed);
      const auto it = routes_.out.find(state.key(task));
      if (it == routes_.out.end()) return;
      std::lock_guard lock(queue_mutex_);
      queue_.emplace_back(&it->second, result);
    };
    return cb;
  }

  // Turns until the local run ended (`done`), every peer said it is done too,
  // and every send was taken. The first failure (its own, once `done` holds
  // it, or a peer's) is in failure().
  void loop(const std::atomic<bool>& done, const std::exception_ptr& run_error) {
    const int peers = comm_.size() - 1;
    bool told = false;
    int idle = 0;
    Clock::time_point last = Clock::now();
    for (;;) {
      bool busy = send_results();
      while (std::optional<Message> m = comm_.try_receive()) {
        busy = true;
        receive(std::move(*m));
      }
      if (!told && done.load(std::memory_order_acquire)) {
        send_results();  // what the last tasks queued before the run ended
        if (run_error && !failure_) {
          failure_ = run_error;
          own_failure_ = true;
          const std::vector<std::byte> bytes = encode_error(run_error);
          for (int q = 0; q < comm_.size(); ++q) {
            if (q != comm_.rank()) comm_.send(q, kError, bytes);
          }
        }
        for (int q = 0; q < comm_.size(); ++q) {
          if (q != comm_.rank()) comm_.send(q, kDone, {});
        }
        told = true;
      }
      const Clock::time_point now = Clock::now();
      // A sample per turn (turns are at most ~2 ms apart): no task ran and results are awaited.
      if (!told && running_.load(std::memory_order_relaxed) == 0 && inbox_.pending() > 0) {
        wait_ += std::chrono::duration<double>(now - last).count();
      }
      last = now;
      if (told && dones_ == peers && comm_.unfinished_sends() == 0) return;
      if (busy) {
        idle = 0;
      } else if (++idle < 64) {
        std::this_thread::yield();
      } else {
        // Idle for longer: back off from 50 us to 1.6 ms between turns, so that
        // a rank whose tasks run long spends no core on polling.
        std::this_thread::sleep_for(std::chrono::microseconds(50) * (1 << std::min(idle / 64 - 1, 5)));
      }
    }
  }

  //! The error this rank throws: its own or the first a peer reported.
  std::exception_ptr failure() const { return failure_; }
  bool own_failure() const { return own_failure_; }
  void add_stats(RunStats& s) const {
    s.bytes_sent = bytes_sent_;
    s.bytes_received = bytes_received_;
    s.messages_sent = messages_sent_;
    s.messages_received = messages_received_;
    s.network_wait_seconds = wait_;
  }

 private:
  // Serializes each queued result once and sends it to every rank that needs it.
  bool send_results() {
    std::vector<std::pair<const Route*, Value>> batch;
    {
      std::lock_guard lock(queue_mutex_);
      batch.swap(queue_);
    }
    for (auto& [route, value] : batch) {
      BytesWriter w;
      w.put<uint32_t>(route->id);
      try {
        to_wire(value, w);
      } catch (...) {
        // A result without a wire form: the local run stops with this error,
        // which the loop then reports to the peers as this rank's failure.
        inbox_.fail(std::current_exception());
        continue;
      }
      value = Value();  // the bytes stand for it now
      std::vector<std::byte>& bytes = w.bytes();
      for (size_t k = 0; k < route->to.size(); ++k) {
        bytes_sent_ += bytes.size();
        ++messages_sent_;
        comm_.send(route->to[k], kResult, k + 1 == route->to.size() ? std::move(bytes) : bytes);
      }
    }
    return !batch.empty();
  }

  void receive(Message m) {
    if (m.tag == kDone) {
      ++dones_;
      return;
    }
    if (m.tag == kError) {
      if (failure_) return;
      try {
        failure_ = rank_error(decode_error(m));
      } catch (...) {
        failure_ = std::current_exception();  // a damaged report is still a failure of that rank
      }
      inbox_.fail(failure_);
      return;
    }
    bytes_received_ += m.bytes.size();
    ++messages_received_;
    if (failure_) return;  // the run stops anyway
    try {
      auto holder = std::make_shared<std::vector<std::byte>>(std::move(m.bytes));
      BytesReader r(std::shared_ptr<const std::byte>(holder, holder->data()), holder->size(),
                    absl::StrCat("a result from rank ", m.source));
      const auto id = r.get<uint32_t>();
      if (id >= plan_.num_tasks()) {
        throw Error(absl::StrCat("a result from rank ", m.source, " names task ", id, ", expected one of the ",
                                 plan_.num_tasks(), " tasks"));
      }
      inbox_.deliver(plan_.key(id), from_wire(r));
    } catch (...) {
      // The local run stops with this error, which the loop then reports to the peers.
      inbox_.fail(std::current_exception());
    }
  }

  const Plan& plan_;
  Communicator& comm_;
  Routes& routes_;
  Inbox& inbox_;
  std::atomic<int> running_{0};
  std::mutex queue_mutex_;
  std::vector<std::pair<const Route*, Value>> queue_;
  std::exception_ptr failure_;
  bool own_failure_ = false;
  int dones_ = 0;
  size_t bytes_sent_ = 0, bytes_received_ = 0, messages_sent_ = 0, messages_received_ = 0;
  double wait_ = 0;
};

// A Result of `keys`' shape, its values taken in turn from `values`.
Result shape_like(const Keys& keys, const std::vector<Value>& values, size_t& next) {
  if (keys.is_key()) return Result(next < values.size() ? values[next++] : Value());
  std::vector<Result> items;
  items.reserve(keys.items().size());
  for (const Keys& k : keys.items()) items.push_back(shape_like(k, values, next));
  return Result(std::move(items));
}

}  // namespace

Result get_across(const Plan& plan, const GetOptions& options, bool sync) {
  Communicator& comm = *options.communicator;
  if (options.inbox) throw ValueError("get: a run across ranks (communicator) makes its own inbox; found one in GetOptions::inbox");
  Routes routes = route(plan, comm.rank(), comm.size(), options.result_on_every_rank);
  auto inbox = std::make_shared<Inbox>(routes.inbox);
  const Plan local_plan(plan.graph(), Keys(routes.request), cached_values(plan), routes.inbox);
  Exchange exchange(plan, comm, routes, *inbox);

  RunStats local_stats;
  GetOptions local = options;
  local.communicator = nullptr;
  local.result_on_every_rank = false;
  local.cache = Cache();
  local.inbox = inbox;
  local.stats = &local_stats;
  local.callbacks.push_back(exchange.hooks());

  // The run on the caller's thread, the loop on a thread of its own: get
  // keeps one oneTBB arena per calling thread for the next runs (a fresh
  // thread per run would make and drop an arena each time, and oneTBB's
  // recycling of task memory between such threads is invisible to
  // ThreadSanitizer). One thread makes every Communicator call of the run.
  std::exception_ptr run_error, loop_error;
  std::atomic<bool> done{false};
  std::thread net([&] {
    try {
      exchange.loop(done, run_error);
    } catch (...) {
      // Only a failure of the transport itself (or memory) gets here: the run
      // stops, and peers that still expect this rank's messages learn of it
      // from the transport (under MPI, the job ends with this rank's exception).
      loop_error = std::current_exception();
      inbox->fail(loop_error);
    }
  });
  std::optional<Result> result;
  try {
    result = sync ? get_sync(local_plan, local) : get(local_plan, local);
  } catch (...) {
    run_error = std::current_exception();
  }
  done.store(true, std::memory_order_release);
  net.join();
  if (loop_error) std::rethrow_exception(loop_error);
  exchange.add_stats(local_stats);
  if (options.stats != nullptr) *options.stats = local_stats;
  if (const std::exception_ptr failure = exchange.failure()) {
    if (!exchange.own_failure()) std::rethrow_exception(failure);
    // This rank's own error: a task's is told as every rank tells it (naming this rank).
    try {
      std::rethrow_exception(failure);
    } catch (const TaskError& e) {
      std::rethrow_exception(rank_error(RemoteError{comm.rank(), true, std::string(e.key().name()), e.function(),
                                                    e.message(), {e.key().index().begin(), e.key().index().end()}}));
    }
  }
  std::vector<Value> values;
  if (routes.returned > 0) {
    for (size_t k = 0; k < routes.returned; ++k) values.push_back((*result)[k].value());
  }
  size_t next = 0;
  return shape_like(plan.keys(), values, next);
}

}  // namespace tessera::detail
