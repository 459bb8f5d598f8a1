// What the client (rank 0) and the engines (ranks 1..N-1) say to each other.
//
// Every message is one Value in its wire form (tessera/graph/wire.hpp): a
// ValueList whose first items say what it is. Requests go from the client to
// engines in the order the client made them (MPI keeps the order of messages
// between two ranks on one tag), and each engine answers its requests in that
// order, so the client matches answers to requests by position; the sequence
// number in both is a check and names an apply's messages among engines.
//
//   request  [kind, seq, ...]            kind: apply, assign, assign_all, pull, stop
//     apply      [apply, seq, method, function name, targets (vector<int>), args]
//                  args: ValueList of [is_reference (bool), literal or name]
//     assign     [assign, seq, method, name, value]       one message per engine
//     assign_all [assign_all, seq, method, {name: value}]
//     pull       [pull, seq, method, name]
//     stop       [stop, seq]
//   reply    [seq, ok (bool), value]  or  [seq, false, type, message]
//   heartbeat  an empty message, every lost_after/10 while an engine has work
#pragma once

#include <mpi.h>

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/value.hpp"

namespace tessera::mpi::detail {

enum Tag : int { kRequestTag = 1, kReplyTag = 2, kHeartbeatTag = 3 };
enum class Kind : int64_t { apply = 0, assign = 1, assign_all = 2, pull = 3, stop = 4 };

//! A message's bytes, shared so that Values read from it (arrays) can keep them alive.
struct Message {
  std::shared_ptr<const std::byte> data;
  size_t size = 0;
  int source = 0;
  int tag = 0;
};

//! Receives the message that `status` (from MPI_Iprobe) announced into a buffer
//! aligned for any element type, so that arrays read from it can be views.
Message receive(MPI_Comm comm, const MPI_Status& status);
//! The Value a message holds; `what` names the message in errors.
Value decode(const Message& m, const std::string& what);
//! Throws tessera::Error naming `what` when an MPI call returned `code`.
void check(int code, const char* what);

//! Backs off while polling: yields first (a message is often microseconds
//! away), then sleeps longer and longer up to a millisecond, so idle ranks on an
//! oversubscribed machine leave the cores to ranks with work.
class Backoff {
 public:
  void pause();
  void reset() { spins_ = 0; }

 private:
  int spins_ = 0;
};

}  // namespace tessera::mpi::detail
