// tessera/scheduler/options.hpp — how to run: GetOptions, RunStats, CancellationToken.
//
// One options struct serves get_sync and get, as dask's keyword arguments do:
// workers, callback sets, precomputed values (`cache`), rerunning a failed task
// on the caller's thread for a debugger, a cancellation token, and a place to
// receive the run's figures; and a memory limit, under which the run chooses
// tasks by their effect on memory and spills held results to a scratch folder
// (get.hpp says how).
//
// @code
//   tessera::CancellationToken stop;
//   tessera::RunStats stats;
//   tessera::GetOptions opts{.num_workers = 4, .cancel = stop, .stats = &stats, .memory_limit = 2ull << 30};
//   auto r = tessera::get(g, {"a", "b"}, opts);   // another thread may call stop.cancel()
//   std::cout << stats.peak_held_bytes << " bytes held at most\n";
// @endcode
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/scheduler/callbacks.hpp"
#include "tessera/scheduler/inbox.hpp"

namespace tessera {

class Communicator;

//! Stops a run from another thread (or from a task or a callback). Copies share
//! one flag. Thread-safe.
class CancellationToken {
 public:
  CancellationToken() : flag_(std::make_shared<std::atomic<bool>>(false)) {}
  //! Asks every run holding this token to stop: nothing new starts, running
  //! tasks finish, and the run throws Cancelled.
  void cancel() const { flag_->store(true, std::memory_order_relaxed); }
  //! True once cancel() was called on this token or a copy of it.
  bool cancelled() const { return flag_->load(std::memory_order_relaxed); }

 private:
  std::shared_ptr<std::atomic<bool>> flag_;
};

//! Precomputed values by key: such keys are not computed, and what only they
//! needed is not run. A map type of tessera's own, so that its implementation
//! (a hash table) is not part of the API; copies are independent. Not
//! thread-safe for writes.
//! @code
//!   tessera::Cache cache;
//!   cache.emplace("z", tessera::Value(40));
//!   int w = tessera::get_sync(g, "w", {.cache = cache}).as<int>();
//! @endcode
class Cache {
 public:
  //! An empty cache; it allocates nothing until the first insert.
  Cache();
  //! A copy of `other`'s entries (the values are shared, not copied).
  Cache(const Cache& other);
  //! Takes `other`'s entries; `other` is left empty.
  Cache(Cache&& other) noexcept;
  //! Replaces the entries by a copy of `other`'s.
  Cache& operator=(const Cache& other);
  //! Replaces the entries by `other`'s; `other` is left empty.
  Cache& operator=(Cache&& other) noexcept;
  ~Cache();

  //! Adds `value` for `key` unless the key has a value already; true when added.
  bool emplace(const Key& key, Value value);
  //! Sets the value of `key`, replacing the one it had.
  void insert_or_assign(const Key& key, Value value);
  //! Removes `key`'s value; true when it had one.
  bool erase(const Key& key);
  //! The value of `key`, or nullptr when it has none.
  const Value* find(const Key& key) const;
  //! Whether `key` has a value.
  bool contains(const Key& key) const { return find(key) != nullptr; }
  //! The number of entries.
  size_t size() const;
  //! Whether there are none.
  bool empty() const { return size() == 0; }
  //! Calls `f(key, value)` for every entry, in no particular order.
  void for_each(const std::function<void(const Key&, const Value&)>& f) const;

 private:
  struct Map;
  std::unique_ptr<Map> map_;  // null while empty: a default GetOptions allocates nothing
};

//! Figures of one run, filled in also when it fails.
struct RunStats {
  size_t tasks = 0;            //!< tasks the run had to execute
  size_t tasks_run = 0;        //!< tasks that ran to completion
  size_t peak_held = 0;        //!< RunState::peak_count at the end
  size_t peak_held_bytes = 0;  //!< RunState::peak_bytes at the end
  int num_workers = 0;         //!< workers the run used
  size_t spilled_bytes = 0;    //!< bytes written to the scratch folder (memory_limit)
  size_t spill_count = 0;      //!< results moved to disk
  size_t reload_count = 0;     //!< results brought back before a reader ran
  double spill_seconds = 0;    //!< time workers spent spilling, all together
  double reload_seconds = 0;   //!< time workers spent reloading, all together
  //! @name A run across ranks (GetOptions::communicator): this rank's figures.
  //! The task counts above are this rank's share; results received count as
  //! tasks of its run (they are held results as a task's are).
  //! @{
  size_t bytes_sent = 0;              //!< bytes of results this rank sent (wire form, all destinations)
  size_t bytes_received = 0;          //!< bytes of results this rank received
  size_t messages_sent = 0;           //!< results sent: one per (result, destination rank)
  size_t messages_received = 0;       //!< results received
  size_t receives_deferred = 0;       //!< results received only after waiting in the transport for memory (memory_limit)
  double network_wait_seconds = 0;    //!< time no task of this rank ran while it awaited a result from another rank (sampled by the message loop, turns at most ~2 ms apart)
  //! The most this rank held at once, as its message loop saw it each turn:
  //! the run's results (RunState::held_bytes), results received and not yet
  //! taken by the run, and serialized results its sends still keep
  //! (Communicator::unfinished_send_bytes). What memory_limit bounds across ranks.
  size_t peak_rank_bytes = 0;
  //! @}
};

//! How `get` and `get_sync` run: workers, callbacks, cancellation, memory budget and statistics.
struct GetOptions {
  //! Workers of `get`, the caller's thread included; 0 means the hardware
  //! threads (tbb::info::default_concurrency()). At most oneTBB's thread cap
  //! (tbb::global_control::max_allowed_parallelism, by default the hardware
  //! threads) are used. get_sync ignores it.
  int num_workers = 0;
  //! Callback sets; each hook of each set is called (see callbacks.hpp).
  std::vector<Callbacks> callbacks{};
  //! Values to use instead of computing their keys.
  Cache cache{};
  //! After a task failed and the run stopped, run that task again on the
  //! caller's thread (inputs still held) before throwing, so a debugger stopped
  //! on `throw` sees it there.
  bool rerun_exceptions_locally = false;
  //! Cancelling it stops the run, which then throws Cancelled.
  CancellationToken cancel{};
  //! When set, receives the run's figures (also when it throws).
  RunStats* stats = nullptr;
  //! Bytes the results held at once may take (RunState::held_bytes); 0: no
  //! limit. Above `memory_target` of it the next task is chosen by its effect on
  //! memory, above `memory_pause` no task that only adds starts while another
  //! runs, and above the limit held results spill to `scratch_dir`. When it
  //! cannot be kept, the run throws MemoryLimitError.
  size_t memory_limit = 0;
  //! Fractions of memory_limit, as dask.distributed's worker thresholds;
  //! 0 < memory_target <= memory_pause <= 1 (get throws Error otherwise).
  double memory_target = 0.6;
  //! While bytes held are at or above this fraction, no new task starts unless none is running.
  double memory_pause = 0.8;
  //! Under the budget, the room kept for each running task (for a task alone,
  //! when held results can spill to make it), in multiples of the largest result
  //! so far: 1 keeps room for its result;
  //! 3 also for working memory twice as large (tessera.get: numpy's temporaries,
  //! as in `(x - m) / s`). At least 1 (get throws Error otherwise).
  double task_footprint = 1.0;
  //! Where spilled results go: a folder `tessera-spill-*` made inside it and
  //! removed at the end of the run (also on error and cancellation). Empty:
  //! $TMPDIR, else /tmp.
  std::string scratch_dir{};
  //! Bytes the scratch folder may hold; a result that does not fit stays in memory.
  uint64_t disk_limit = UINT64_MAX;
  //! When set, the run spreads over the ranks of this communicator: every rank
  //! calls get with the same graph and keys, runs the tasks place() gives it
  //! (tessera/across/placement.hpp) and sends each result another rank reads
  //! there once; the figures in `stats` are this rank's. The result is on rank
  //! 0 only (the other ranks get a Result of the keys' shape whose values are
  //! empty) unless `result_on_every_rank`. A task that fails on any rank stops
  //! every rank: each throws TaskError naming the key and the rank ("... failed:
  //! on rank 3: ..."). tessera::mpi::get (tessera/mpi/get.hpp) is this over
  //! MPI_COMM_WORLD.
  std::shared_ptr<Communicator> communicator = nullptr;
  //! With a communicator: return the requested values on every rank, not only on rank 0.
  bool result_on_every_rank = false;
  //! With a communicator: a peer rank that sends nothing for this many seconds
  //! while this rank still expects its messages is lost (killed, crashed): the
  //! run stops and throws RankLostError (tessera/comm/communicator.hpp) naming
  //! it. Each rank's network thread sends a heartbeat every tenth of it, also
  //! while its tasks run long. 0: never.
  double lost_after_seconds = 60;
  //! Keys whose values arrive while the run goes on instead of being computed
  //! (another thread delivers them; inbox.hpp says how). A fresh Inbox per run.
  std::shared_ptr<Inbox> inbox = nullptr;
};

}  // namespace tessera
