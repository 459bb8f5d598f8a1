// tessera/scheduler/get.hpp — run a graph: get_sync (one thread) and get (threaded).
//
// Both follow dask's get_async: keep what the keys need, give every task an
// `order` priority, and run from one LIFO stack of ready tasks, pushing the tasks
// one completion makes ready so the best priority is popped first. A result is
// released as soon as its last reader has run, unless it was requested; the bytes
// results hold are tracked throughout (RunState, RunStats). The first failing
// task stops the run: nothing new starts, running tasks finish, every result is
// released, and the error is thrown on the caller's thread:
//   - a task's exception -> TaskError (key, function, message; the original is
//     nested: std::rethrow_if_nested(e) throws it);
//   - an argument of the wrong type -> TypeError naming the task's key;
//   - a cancelled GetOptions::cancel -> Cancelled;
//   - tasks that wait on each other -> CycleError;
//   - an exception from a callback -> that exception;
//   - a memory limit that cannot be kept -> MemoryLimitError (below);
//   - Inbox::fail(error) on GetOptions::inbox -> that error (inbox.hpp: keys
//     whose values another thread delivers while the run goes on).
//
// With GetOptions::memory_limit the run keeps the bytes its results hold within
// the limit, plus what the running tasks just made (one result per worker):
//   - below `memory_target` of the limit it runs exactly as without one; above
//     it the next task is chosen by its effect on memory (tasks that free an
//     input first), and above `memory_pause` a task that frees nothing starts
//     only when no other task runs;
//   - above the limit, held results that no running task reads go to disk, the
//     one needed latest in `order` first, and come back just before a reader
//     runs. Results whose type has a Spillable form spill
//     (tessera/graph/spill.hpp; NDArray blocks come back as mappings of the
//     scratch file); others stay and count. Scratch files live in a folder
//     inside GetOptions::scratch_dir, removed when the run ends, whatever the
//     ending;
//   - MemoryLimitError when one task's inputs and result together exceed the
//     limit, or a task must start and nothing held can spill while nothing else
//     runs: it names the task, the bytes it needed and the largest results held.
// docs/scheduler.md explains the algorithm (tiers, pins, victims) and its costs.
//
// `get` runs `num_workers` workers in a tbb::task_arena; the caller's thread is
// one of them, and there is no dispatcher thread. A task may itself call get.
// `num_workers` is an upper bound: while the tasks are too short for workers to
// gain on one another (a few microseconds each), the run goes on with the
// caller's thread alone, and widens again when that stops paying. Preparing a
// large graph (its Plan) uses the same arena for its independent parts.
// `get_sync` runs every task on the caller's thread, for debugging and for
// measuring memory (docs/graph-format.md's `sync_max_held` is its peak).
//
// @code
//   int w = tessera::get(g, "w").as<int>();
//   tessera::Result r = tessera::get_sync(g, {"z", "w"});
//   tessera::Result s = tessera::get(g, {"z", "w"}, {.num_workers = 2});
//   tessera::get(g, "w", {.memory_limit = size_t{2} << 30});   // at most 2 GiB held
// @endcode
//
// Thread-safe: several runs (also of one Graph or Plan) may go on at once.
#pragma once

#include "tessera/graph/graph.hpp"
#include "tessera/scheduler/keys.hpp"
#include "tessera/scheduler/options.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera {

//! Computes `keys` of `g` on the caller's thread; the result has the shape of `keys`.
//! @code
//!   tessera::get_sync(g, "w").as<int>();
//! @endcode
Result get_sync(const Graph& g, const Keys& keys, const GetOptions& options = {});
//! Runs a prepared Plan on the caller's thread (options.cache is the Plan's business).
//! @code
//!   tessera::Plan plan(g, "w");
//!   tessera::get_sync(plan).as<int>();
//! @endcode
Result get_sync(const Plan& plan, const GetOptions& options = {});

//! Computes `keys` of `g` with options.num_workers workers (the caller's thread included).
//! @code
//!   tessera::get(g, {"z", "w"}, {.num_workers = 4})[1].as<int>();
//! @endcode
Result get(const Graph& g, const Keys& keys, const GetOptions& options = {});
//! Runs a prepared Plan with options.num_workers workers.
//! @code
//!   tessera::Plan plan(g, "w");
//!   tessera::get(plan, {.num_workers = 2}).as<int>();
//! @endcode
Result get(const Plan& plan, const GetOptions& options = {});

}  // namespace tessera
