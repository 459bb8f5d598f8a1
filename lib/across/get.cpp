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
//             each outgoing result once (tessera/graph/wire.hpp; an array's
//             elements are sent from its buffer, not copied) and sends it to
//             each rank that needs it, delivers what arrives into the Inbox,
//             and relays errors. With a memory limit it leaves in the
//             transport the results the run cannot hold yet (deferred
//             receives, receive_within_limit). When its run ended, a rank tells every peer
//             "done" and keeps receiving until every peer said so and its own
//             sends were taken: messages from one rank arrive in order, so after
//             a peer's "done" nothing more comes from it, and no rank leaves
//             while another still sends to it -- also after an error.
//
// Messages: kResult carries the task's id in the Plan (the same on every rank:
// every rank built the same Plan) and the value's wire form; kError the
// failure's kind and, for a task's error, its key, function and message, for a
// MemoryLimitError its task, figures and reason; kDone and kAlive nothing.
//
// Lost ranks: until it said "done", a rank's loop sends kAlive to every peer
// every tenth of GetOptions::lost_after_seconds; a peer from which nothing came
// for lost_after_seconds while its "done" was still awaited is lost (killed,
// crashed), and the run stops with RankLostError naming it. The loop then
// waits neither for that peer's "done" nor for sends it will never take.
#include "tessera/across/get.hpp"

#include "across/rank_error.hpp"
#include "across/split_across.hpp"
#include "scheduler/across_hook.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>
#include <absl/strings/str_cat.h>

#include "tessera/across/placement.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/wire.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/inbox.hpp"

namespace tessera::detail {
namespace {

enum Tag : int { kResult = 1, kError = 2, kDone = 3, kAlive = 4 };

using Clock = std::chrono::steady_clock;

// A result other ranks need: its id in the Plan, the ranks it goes to, and
// its index among the local run's requested keys (Inbox::sent).
struct Route {
  uint32_t id;
  std::vector<int> to;
  size_t request;
};

// What this rank runs, sends and receives.
struct Routes {
  std::vector<Key> request;                  // the local run's keys: the caller's (if it returns them), then `out`'s
  size_t returned = 0;                       // how many of `request` are the caller's keys
  std::vector<Key> inbox;                    // results computed elsewhere that this rank needs
  absl::flat_hash_map<Key, Route> out;       // own results other ranks need, by key
};

// The Plan's shape as a number every process computes alike (FNV-1a over each
// task's key and the ids it reads; absl::Hash is seeded per process): ranks that
// built other graphs, such as array names or delayed keys made per process,
// differ here.
uint64_t fingerprint(const Plan& plan) {
  uint64_t h = 1469598103934665603ull;
  auto mix = [&h](const void* data, size_t n) {
    const auto* p = static_cast<const unsigned char*>(data);
    for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  };
  for (uint32_t t = 0; t < plan.size(); ++t) {
    const Key& k = plan.key(t);
    const std::string_view name = k.name();
    const auto index = k.index();
    const uint64_t sizes[2] = {name.size(), index.size()};
    mix(sizes, sizeof sizes);
    mix(name.data(), name.size());
    mix(index.data(), index.size_bytes());
    if (t < plan.num_tasks()) {
      const auto deps = plan.dependencies(t);
      const uint64_t n = deps.size();
      mix(&n, sizeof n);
      mix(deps.data(), deps.size_bytes());
    }
  }
  return h;
}

// Collective: throws ValueError on every rank when a rank's Plan differs from
// rank 0's.
void check_same_plan(const Plan& plan, Communicator& comm) {
  const std::vector<int64_t> prints = comm.allgather(static_cast<int64_t>(fingerprint(plan)));
  const std::vector<int64_t> sizes = comm.allgather(static_cast<int64_t>(plan.size()));
  for (int r = 1; r < comm.size(); ++r) {
    if (prints[static_cast<size_t>(r)] == prints[0]) continue;
    throw ValueError(absl::StrCat(
        "get across ranks: expected every rank to build rank 0's graph, found another on rank ", r, " (",
        sizes[static_cast<size_t>(r)], " nodes against rank 0's ", sizes[0],
        "): every rank must call get with the same graph and keys; array names and delayed keys made "
        "per process differ between ranks (docs/mpi-graphs.md)"));
  }
}

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
        r.out.emplace(plan.key(t), Route{t, to, r.request.size()});
        r.request.push_back(plan.key(t));
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

// The network thread of a run across ranks: all Communicator calls.
class Exchange {
 public:
  Exchange(const Plan& plan, Communicator& comm, Routes& routes, Inbox& inbox, size_t memory_limit,
           double lost_after_seconds)
      : plan_(plan), comm_(comm), routes_(routes), inbox_(inbox), limit_(memory_limit),
        lost_after_(std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(lost_after_seconds))),
        deferred_(static_cast<size_t>(comm.size()), 0),
        peer_done_(static_cast<size_t>(comm.size()), 0),
        heard_(static_cast<size_t>(comm.size()), Clock::now()) {}

  // The hooks of the local run: results other ranks need go to the queue; the
  // count of running tasks tells the loop when the rank only waits.
  Callbacks hooks() {
    Callbacks cb;
    // The loop reads the bytes the run holds while the run is alive (start to finish).
    cb.start = [this](const RunState& state) {
      std::lock_guard lock(state_mutex_);
      state_ = &state;
    };
    cb.finish = [this](const RunState&, bool) {
      std::lock_guard lock(state_mutex_);
      state_ = nullptr;
    };
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
    Clock::time_point last = Clock::now(), alive = last;
    for (;;) {
      unsent_ = comm_.unfinished_send_bytes();
      bool busy = send_results();
      if (!told && lost_after_.count() > 0 && last - alive >= lost_after_ / 10) {
        alive = last;
        send_to_peers(kAlive, {});
      }
      if (limit_ == 0 || told || failure_) {
        while (std::optional<Message> m = comm_.try_receive()) {
          busy = true;
          receive(std::move(*m));
        }
      } else {
        busy = receive_within_limit(idle) || busy;
      }
      if (!told && done.load(std::memory_order_acquire)) {
        send_results();  // what the last tasks queued before the run ended
        if (run_error && !failure_) fail_here(run_error);
        send_to_peers(kDone, {});
        told = true;
      }
      peak_rank_bytes_ = std::max(peak_rank_bytes_, held_bytes());
      const Clock::time_point now = Clock::now();
      // A sample per turn (turns are at most ~2 ms apart): no task ran and results are awaited.
      if (!told && running_.load(std::memory_order_relaxed) == 0 && inbox_.pending() > 0) {
        wait_ += std::chrono::duration<double>(now - last).count();
      }
      last = now;
      if (lost_after_.count() > 0) find_lost(now);
      // A lost peer takes nothing more: its sends would never finish.
      if (told && dones_ + lost_ == peers && (lost_ > 0 || (comm_.unfinished_sends() == 0 && queue_empty()))) return;
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
    s.receives_deferred = receives_deferred_;
    s.peak_rank_bytes = peak_rank_bytes_;
  }

 private:
  void send_to_peers(int tag, const std::vector<std::byte>& bytes) {
    for (int q = 0; q < comm_.size(); ++q) {
      if (q != comm_.rank() && peer_done_[static_cast<size_t>(q)] != kLost) comm_.send(q, tag, bytes);
    }
  }

  // A peer whose "done" is awaited and from which nothing came for lost_after_
  // is lost: the run stops with RankLostError (unless it failed already).
  void find_lost(Clock::time_point now) {
    for (int q = 0; q < comm_.size(); ++q) {
      const auto i = static_cast<size_t>(q);
      if (q == comm_.rank() || peer_done_[i] != 0 || now - heard_[i] < lost_after_) continue;
      peer_done_[i] = kLost;
      ++lost_;
      if (failure_) continue;
      failure_ = std::make_exception_ptr(RankLostError(absl::StrCat(
          "rank ", q, " was lost: rank ", comm_.rank(), " heard nothing from it for ",
          std::chrono::duration<double>(lost_after_).count(), " s while it awaited its messages (killed or crashed?)")));
      inbox_.fail(failure_);
    }
  }

  // With a memory limit, while the run goes on: each peer's messages in turn,
  // a result only when the bytes the rank holds (held_bytes: the run's, those
  // delivered and not taken yet, its own sends' not yet taken) leave room for it. One that does not fit stays in the transport
  // (and so do that peer's later messages, which come after it); other peers'
  // messages -- their errors and "done" too -- are still taken. When no task
  // runs and nothing delivered waits to be taken, the run cannot free memory
  // before it gets a result: one result is then taken past the limit (its run
  // spills what it holds to make room; its sends' bytes go as its peers take
  // them, so they do not hold this back), so that no rank waits forever. A rank
  // thus exceeds its limit by at most one result, one task's need. (Should the
  // run hold more than its limit with nothing it can spill, the loop still
  // takes one after idling for about half a second: the run then fails with a
  // MemoryLimitError rather than wait.)
  bool receive_within_limit(int idle) {
    bool busy = false, forced = false;
    for (int q = 0; q < comm_.size(); ++q) {
      if (q == comm_.rank()) continue;
      const auto take = [&](int tag, size_t bytes) {
        heard_[static_cast<size_t>(q)] = Clock::now();  // a message waits: the peer is alive
        if (tag != kResult) return true;
        const size_t held = held_bytes();
        if (held <= limit_ && bytes <= limit_ - held) return true;
        if (!forced && running_.load(std::memory_order_relaxed) == 0 && inbox_.untaken_bytes() == 0 &&
            (held - unsent_ <= limit_ || idle > 64 * 6 + 256)) {
          forced = true;
          return true;
        }
        deferred_[static_cast<size_t>(q)] = 1;
        return false;
      };
      while (std::optional<Message> m = comm_.try_receive_from(q, take)) {
        busy = true;
        if (m->tag == kResult && std::exchange(deferred_[static_cast<size_t>(q)], 0) != 0) ++receives_deferred_;
        receive(std::move(*m));
        if (failure_) return true;  // the rest is taken as it comes
      }
    }
    return busy;
  }

  // This rank's own failure: kept as the run's, and told to every peer.
  void fail_here(std::exception_ptr error) {
    failure_ = std::move(error);
    own_failure_ = true;
    send_to_peers(kError, encode_error(remote_error(failure_, comm_.rank())));
  }

  // What the rank holds: the run's results, what waits in the inbox for it,
  // and the serialized results its sends still keep (as of this turn).
  size_t held_bytes() {
    std::lock_guard lock(state_mutex_);
    return (state_ != nullptr ? state_->held_bytes() : 0) + inbox_.untaken_bytes() + unsent_;
  }

  bool queue_empty() {
    std::lock_guard lock(queue_mutex_);
    return queue_.empty();
  }

  // Serializes each queued result once and sends it to every rank that needs
  // it. With a memory limit, a result whose wire form would not fit waits in
  // the queue (its value is the run's, counted there) while earlier sends still
  // keep their bytes: the rank's sends then hold at most one result past the
  // limit. On failure everything goes (the peers stop anyway).
  bool send_results() {
    std::vector<std::pair<const Route*, Value>> batch;
    {
      std::lock_guard lock(queue_mutex_);
      batch.swap(queue_);
    }
    for (size_t next = 0; next < batch.size(); ++next) {
      auto& [route, value] = batch[next];
      if (limit_ > 0 && unsent_ > 0 && !failure_) {
        const size_t held = held_bytes(), bytes = value.nbytes();
        if (held > limit_ || bytes > limit_ - held) {
          std::lock_guard lock(queue_mutex_);  // the rest goes first next turn, in order
          queue_.insert(queue_.begin(), std::make_move_iterator(batch.begin() + static_cast<std::ptrdiff_t>(next)),
                        std::make_move_iterator(batch.end()));
          return next > 0;
        }
      }
      PartsWriter w;  // an array's elements stay in its buffer until sent
      w.put<uint32_t>(route->id);
      try {
        to_wire(value, w);
      } catch (...) {
        // A result without a wire form: this rank's failure, told to the peers
        // now (the local run may have ended already: a requested result goes
        // after its task, and rank 0 would wait for it), and the local run stops.
        if (!failure_) fail_here(std::current_exception());
        inbox_.fail(std::current_exception());
        continue;
      }
      value = Value();  // the parts stand for it now
      // Under a limit the run kept the result (counted) until now.
      if (limit_ > 0) inbox_.sent(route->request);
      const std::vector<SharedBytes>& parts = w.parts();
      // Until the next turn reads the transport's count: a copy per rank at
      // most (thread ranks copy; MPI's sends share the parts and count them once).
      unsent_ += w.size() * route->to.size();
      for (const int q : route->to) {
        bytes_sent_ += w.size();
        ++messages_sent_;
        comm_.send_parts(q, kResult, parts);
      }
    }
    return !batch.empty();
  }

  void receive(Message m) {
    heard_[static_cast<size_t>(m.source)] = Clock::now();
    if (m.tag == kAlive) return;
    if (m.tag == kDone) {
      if (peer_done_[static_cast<size_t>(m.source)] == kLost) --lost_;  // it spoke again after all
      peer_done_[static_cast<size_t>(m.source)] = 1;
      ++dones_;
      return;
    }
    if (m.tag == kError) {
      if (failure_) return;
      try {
        failure_ = rank_error(decode_error(m.bytes.span(), m.source));
      } catch (...) {
        failure_ = std::current_exception();  // a damaged report is still a failure of that rank
      }
      inbox_.fail(failure_);
      return;
    }
    bytes_received_ += m.bytes.size;
    ++messages_received_;
    if (failure_) return;  // the run stops anyway
    try {
      BytesReader r(std::move(m.bytes.data), m.bytes.size, absl::StrCat("a result from rank ", m.source));
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
  const size_t limit_;                 // GetOptions::memory_limit (0: none)
  const Clock::duration lost_after_;   // GetOptions::lost_after_seconds (0: never)
  static constexpr uint8_t kLost = 2;
  std::mutex state_mutex_;
  const RunState* state_ = nullptr;    // the local run's, from start to finish
  std::vector<uint8_t> deferred_;      // per peer: its next result was left for want of memory
  std::vector<uint8_t> peer_done_;     // per peer: 0, 1 once its kDone came, kLost
  std::vector<Clock::time_point> heard_;  // per peer: when a message of it was last seen
  int lost_ = 0;
  size_t receives_deferred_ = 0;
  size_t peak_rank_bytes_ = 0;          // RunStats::peak_rank_bytes
  size_t unsent_ = 0;                   // Communicator::unfinished_send_bytes, as of this turn and its sends
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

Result get_across(const Plan& plan, const GetOptions& options, bool sync) {
  if (!options.communicator) {
    throw ValueError("across::get: a run across ranks needs GetOptions::communicator; found none");
  }
  Communicator& comm = *options.communicator;
  if (options.inbox) throw ValueError("get: a run across ranks (communicator) makes its own inbox; found one in GetOptions::inbox");
  check_same_plan(plan, comm);
  Routes routes = route(plan, comm.rank(), comm.size(), options.result_on_every_rank);
  auto inbox = std::make_shared<Inbox>(routes.inbox);
  // The results this rank computes for others are released once handed on,
  // not kept to the end of the run: without a limit after their hooks and
  // local readers; with one also only once the loop made their wire form
  // (Inbox::sent), so that a result waiting in the send queue stays
  // counted (and spillable) as the run's, and then its bytes count as the sends'.
  inbox->set_returned(routes.returned);
  const Plan local_plan(plan.graph(), Keys(routes.request), cached_values(plan), routes.inbox);
  Exchange exchange(plan, comm, routes, *inbox, options.memory_limit, options.lost_after_seconds);

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
    // This rank's own error: a task's or the memory limit's is told as every
    // rank tells it (naming this rank); another goes as it is.
    const RemoteError own = remote_error(failure, comm.rank());
    if (own.kind == RemoteError::kOther) std::rethrow_exception(failure);
    std::rethrow_exception(rank_error(own));
  }
  std::vector<Value> values;
  if (routes.returned > 0) {
    for (size_t k = 0; k < routes.returned; ++k) values.push_back((*result)[k].value());
  }
  size_t next = 0;
  return shape_like(plan.keys(), values, next);
}

// The Graph form runs the split form (split_across.hpp) when there is more than
// one rank. Its Plan is built on the caller's thread, as the local run's is.
Result get_across(const Graph& g, const Keys& keys, const GetOptions& options, bool sync) {
  std::optional<Graph> split;
  if (options.communicator && options.communicator->size() > 1) split = split_for_ranks(g);
  return get_across(Plan(split ? *split : g, keys, options.cache), options, sync);
}

// get and get_sync of the scheduler hand a run whose options name a
// communicator here (scheduler/across_hook.hpp), until their callers call
// across::get themselves.
[[maybe_unused]] const bool registered = (set_across_runner({&get_across, &get_across}), true);

}  // namespace

}  // namespace tessera::detail

namespace tessera::across {

Result get(const Graph& g, const Keys& keys, const GetOptions& options) {
  return detail::get_across(g, keys, options, /*sync=*/false);
}
Result get_sync(const Graph& g, const Keys& keys, const GetOptions& options) {
  return detail::get_across(g, keys, options, /*sync=*/true);
}
Result get(const Plan& plan, const GetOptions& options) { return detail::get_across(plan, options, /*sync=*/false); }
Result get_sync(const Plan& plan, const GetOptions& options) {
  return detail::get_across(plan, options, /*sync=*/true);
}

}  // namespace tessera::across
