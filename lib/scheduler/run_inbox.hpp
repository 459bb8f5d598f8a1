// A run's side of its Inbox (GetOptions::inbox; docs/scheduler.md,
// "Deliveries"): which task each inbox key completes, how many deliveries the
// run took, the inbox tasks still pending, and — for the results a run across
// ranks sends — which task a send releases and which results still wait to be
// sent (their sender holds them too, so they are no spill candidates). Empty,
// and `inbox` null, in a run without an inbox: the loop then pays one null
// check per pop. Every field but `inbox` and `task_of` (set before the run
// starts) is guarded by the run's lock.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

#include "inbox_state.hpp"

namespace tessera::detail {

struct Deliveries {
  static constexpr uint32_t kNoTask = UINT32_MAX;

  //! Under a memory limit: whether `task`'s result waits to be sent.
  bool awaits_send(uint32_t task) const { return !awaiting_send.empty() && awaiting_send[task] != 0; }

  InboxState* inbox = nullptr;
  std::vector<uint32_t> task_of;  //!< per inbox key: its task, or kNoTask when the request does not need it
  size_t taken = 0;               //!< deliveries (and sends) taken so far
  uint32_t pending = 0;           //!< inbox tasks not delivered yet
  std::vector<std::pair<uint32_t, Value>> arrivals;  //!< take()'s buffer, kept between takes
  //! Under a memory limit, per requested key: the task whose result a send
  //! releases (kNoTask: the caller's keys, past them one the caller requested too).
  std::vector<uint32_t> sent_task;
  //! Under a memory limit, per task: 1 while its result waits to be sent; and
  //! how many such results have finished.
  std::vector<uint8_t> awaiting_send;
  uint32_t unsent_results = 0;
  //! Detaches the inbox before the run's epoch goes, however the run ends (the
  //! constructor may throw after attaching).
  struct Link {
    InboxState* state = nullptr;
    Link() = default;
    Link(const Link&) = delete;
    Link& operator=(const Link&) = delete;
    ~Link() {
      if (state != nullptr) state->detach();
    }
  } link;
};

}  // namespace tessera::detail
