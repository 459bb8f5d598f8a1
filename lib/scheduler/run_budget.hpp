// The memory budget's state (GetOptions::memory_limit; docs/scheduler.md, "The
// memory budget"). A run with a limit starts as one without, writing each
// settled task and its result's bytes to a log of the worker's own; once the
// bytes held first pass the target, it switches, once, to the budget: per-task
// states and sizes, three tiers of ready tasks by their effect on memory, pins,
// a heap of spill candidates keyed by when they are next needed, and the bytes
// on their way to and from disk. The loop's branches over this state are Run's
// (run_budget.cpp): they weave it with the ledger, the lock and the wake-ups.
//
// Who touches what: `limit`, `target_bytes` and `pause_bytes` are fixed before
// the run starts; `on` is set once, under the lock, and read without it; every
// other field is guarded by the run's lock, except `spill_ns` and `reload_ns`
// (atomics, added to outside it) and a worker's own log.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "spill_store.hpp"

namespace tessera::detail {

//! Whether return_cached_memory also hands back glibc malloc's free pages
//! (malloc_trim walks every arena: worth it only once a megabyte or more was freed).
enum class TrimHeap : bool { kNo, kYes };

//! Hands the memory oneTBB's allocator (and, with TrimHeap::kYes, glibc's malloc)
//! keeps cached for reuse back to the system (under the budget, as a run starts
//! and after a task or a spill freed results).
void return_cached_memory(TrimHeap trim);

//! The process's anonymous resident bytes (resident minus file-backed pages,
//! /proc/self/statm); 0 where that cannot be read.
size_t anonymous_resident_bytes();

struct Budget {
  // Until the switch: the tasks each worker settled and their results' bytes,
  // in memory of its own (a per-task array written by both workers would
  // bounce cache lines between them on every task), written under the lock.
  // Room for every task, from oneTBB's allocator, which hands the pages of one
  // run's log to the next run's (fresh pages cost a run of small tasks more
  // than the writes). The switch reads them to fill the per-task arrays below.
  struct Settled {
    uint32_t task;
    size_t bytes;
  };
  struct ScalableFree {
    void operator()(Settled* p) const;
  };
  struct alignas(64) Log {
    std::unique_ptr<Settled[], ScalableFree> settled;
    size_t count = 0;
  };
  enum TaskState : uint8_t { kWaiting, kReady, kRunning, kFinished };                         // task_state
  enum NodeState : uint8_t { kNone, kResident, kSpilling, kSpilled, kReloading, kReleased };  // node_state
  enum Tier : uint8_t { kReleasing, kNeutral, kAdding };
  static constexpr int64_t kNoFile = -1;       // file: none
  static constexpr int64_t kCannotSpill = -2;  // file: no Spillable form, or no room on disk
  struct Entry {
    uint64_t seq;
    uint32_t task;
  };

  explicit Budget(size_t memory_limit) : limit(memory_limit) {}

  //! With the lock held: whether `node`'s bytes count as on their way to disk.
  void set_leaving(uint32_t node, bool is_leaving) {
    if (leaving_flag[node] == is_leaving) return;
    leaving_flag[node] = is_leaving;
    if (is_leaving) {
      leaving += bytes[node];
    } else {
      leaving -= bytes[node];
    }
  }

  const size_t limit = 0;                    //!< GetOptions::memory_limit; 0: no budget at all
  size_t target_bytes = 0, pause_bytes = 0;  //!< memory_target and memory_pause of it
  size_t base_resident = 0;                  //!< anonymous_resident_bytes() as the budget was prepared
  std::unique_ptr<Log[]> logs;               //!< per worker, until the switch
  std::atomic<bool> on{false};               //!< set by the switch

  // From the switch on (allocated by it).
  std::unique_ptr<size_t[]> bytes;                     //!< per task: its result's bytes
  std::unique_ptr<std::atomic<uint8_t>[]> task_state;  //!< per task; kFinished once settled
  std::vector<uint8_t> node_state, tier, leaving_flag;
  std::vector<uint32_t> pins;  //!< per task: running readers
  std::vector<int64_t> file;   //!< per task: its spill file, or kNoFile / kCannotSpill
  std::vector<Reload> reload;  //!< per task: how its spilled form comes back
  std::vector<uint32_t> reader_offsets, readers, reader_cursor;  //!< readers by priority; the first not started
  std::vector<Entry> tiers[3];
  uint64_t seq = 0;                                    //!< of the last push into a tier
  std::vector<std::pair<uint32_t, uint32_t>> victims;  //!< heap: (next reader's priority, node)
  size_t leaving = 0;                                  //!< bytes being written out
  size_t arriving = 0;                                 //!< bytes being brought back
  size_t largest_result = 0;                           //!< the largest result settled so far
  uint32_t io_busy = 0;                                //!< workers doing io without a task
  std::unique_ptr<SpillStore> store;
  std::atomic<int64_t> spill_ns{0}, reload_ns{0};  //!< time workers spent spilling, reloading
};

}  // namespace tessera::detail
