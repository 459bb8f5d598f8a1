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
//   - an exception from a callback -> that exception.
//
// `get` runs `num_workers` workers in a tbb::task_arena; the caller's thread is
// one of them, and there is no dispatcher thread. A task may itself call get.
// `get_sync` runs every task on the caller's thread, for debugging and for
// measuring memory (docs/graph-format.md's `sync_max_held` is its peak).
//
// @code
//   int w = tessera::get(g, "w").as<int>();
//   tessera::Result r = tessera::get_sync(g, {"z", "w"});
//   tessera::Result s = tessera::get(g, {"z", "w"}, {.num_workers = 2});
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
