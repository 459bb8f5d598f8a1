// tessera/scheduler/inbox.hpp — values of some keys that arrive while a run goes on.
//
// A run normally computes every key it needs. An Inbox names keys whose values
// come from elsewhere instead — from other processes, over the network — and
// arrive while the run goes on, so that computing and receiving overlap: the
// run does not compute these keys, and each of their readers becomes ready the
// moment the last of its inputs, delivered or computed, is there. Another
// thread calls deliver() as values arrive; the run takes them between tasks.
//
// What a run does with an inbox (GetOptions::inbox):
// - Each inbox key must be a key of the graph: the caller puts a placeholder
//   there (a literal, or any task: it is not run, and what only it read is culled,
//   as for a Cache entry). A key both in the inbox and in GetOptions::cache is an
//   error. A Plan made for an inbox is given its keys (Plan's `inbox` argument);
//   running it needs an Inbox that declares exactly those keys.
// - A value delivered before the run starts, or before the run reaches it, is
//   kept until the run takes it. Once taken, it is a held result of the run
//   exactly as if its task had just completed: it counts in RunState's held
//   results, bytes and peaks (and in num_finished(): an inbox key counts as one
//   of the run's tasks), its readers are pushed onto the ready stack by
//   priority, it is released after its last reader, and it is returned when
//   requested. pretask and posttask are not called for it: nothing ran.
// - Workers with nothing to run while keys are still pending sleep (no
//   spinning); a delivery wakes them. The run does not end, and does not report
//   a cycle, while a key it needs is pending. fail() stops the run as a failed
//   task does (running tasks finish, everything is released) and the run throws
//   the given error; a cancelled GetOptions::cancel is noticed within about 10
//   ms while every worker waits for a delivery.
// - With a memory_limit, a delivered value is admitted as a completed result
//   is: it counts in the bytes held, may take them past the target or the
//   limit, and then held results spill as usual; a value larger than the limit
//   on its own is a MemoryLimitError naming its key. Deferring deliveries while
//   memory is short is the caller's business: RunState::held_bytes() plus
//   untaken_bytes() is what the run will hold (a run across ranks leaves such
//   results in the transport, tessera/mpi/get.hpp).
// - An Inbox serves one run (get_sync too: the caller's thread waits for
//   deliveries as a worker does). Once that run ended, values not taken are
//   dropped and later deliveries are checked, then dropped.
//
// @code
//   tessera::Graph g;
//   g.put("remote", 0);                                   // a placeholder: delivered, not computed
//   g.task("y", inc, tessera::ref("remote"));
//   const tessera::Key keys[] = {tessera::Key("remote")};
//   auto inbox = std::make_shared<tessera::Inbox>(keys);
//   std::thread net([&] { inbox->deliver("remote", tessera::Value(41)); });
//   int y = tessera::get(g, "y", {.inbox = inbox}).as<int>();   // 42
//   net.join();
// @endcode
//
// Thread-safe: deliver(), fail() and the observers may be called from any
// thread while a run uses the inbox.
#pragma once

#include <cstddef>
#include <exception>
#include <memory>
#include <span>
#include <vector>

#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"

namespace tessera {

class Inbox;

namespace detail {
class InboxState;
//! The state a run shares with the delivering threads (lib/scheduler).
InboxState& inbox_state(const Inbox& inbox);
}  // namespace detail

//! Values of some keys that arrive while a run goes on (see the file comment).
//! Shared by the run and the threads that deliver; thread-safe.
class Inbox {
 public:
  //! An inbox for `keys`, the keys whose values will be delivered. Throws
  //! ValueError when a key is listed twice.
  //! @code
  //!   const tessera::Key keys[] = {tessera::Key("x", 0), tessera::Key("x", 1)};
  //!   auto inbox = std::make_shared<tessera::Inbox>(keys);
  //! @endcode
  explicit Inbox(std::span<const Key> keys);
  ~Inbox();
  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  //! Delivers the value of `key`; wakes the run's sleeping workers. Throws
  //! ValueError for a key that was not declared or was delivered already.
  //! Thread-safe.
  //! @code
  //!   inbox->deliver(tessera::Key("x", 0), tessera::Value(block));
  //! @endcode
  void deliver(const Key& key, Value value);
  //! Stops the run as a failed task does; the run throws `error` (the first
  //! error given, if called twice). Before the run starts, the run stops at
  //! once. Thread-safe.
  //! @code
  //!   inbox->fail(std::make_exception_ptr(tessera::Error("rank 2 lost")));
  //! @endcode
  void fail(std::exception_ptr error);

  //! The declared keys, in the order given.
  const std::vector<Key>& keys() const;
  //! Whether `key` was declared.
  bool contains(const Key& key) const;
  //! The declared keys not delivered yet. Thread-safe.
  size_t pending() const;
  //! Bytes (Value::nbytes) of the values delivered that the run has not taken
  //! yet: with RunState::held_bytes, what the run will hold. Thread-safe.
  size_t untaken_bytes() const;
  //! Whether fail() was called. Thread-safe.
  bool failed() const;

  //! @name Results to send (a run across ranks: tessera/across/get.hpp).
  //! The other half of the seam: results this run computes for elsewhere.
  //! @{
  //! The run's caller wants back only the Plan's first `n` requested keys; the
  //! others are requested so that the Plan keeps them, and their results leave
  //! through a posttask hook. The run releases each of those once its hooks ran
  //! and its local readers finished (under a memory_limit, only once sent() too).
  //! Call it before the run starts; default: every requested key is returned.
  //! @code
  //!   inbox->set_returned(1);   // key 0 is the caller's; keys 1.. go to other ranks
  //! @endcode
  void set_returned(size_t n);
  //! The result of requested key `request` (one of those past set_returned's
  //! `n`) was handed on (serialized): a run under a memory_limit kept it counted
  //! and spillable until now and releases it; without a limit it was released
  //! after posttask already and this does nothing. A request out of range,
  //! or one said sent before, is ignored. Thread-safe.
  //! @code
  //!   inbox->sent(3);   // from the thread that serialized requested key 3's result
  //! @endcode
  void sent(size_t request);
  //! @}

 private:
  friend detail::InboxState& detail::inbox_state(const Inbox& inbox);
  std::unique_ptr<detail::InboxState> state_;
};

}  // namespace tessera
