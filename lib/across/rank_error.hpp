// Private: a failure on one rank as every rank of a run across ranks raises it.
//
// A task's failure (TaskError) and a memory limit's (MemoryLimitError) travel
// with their key and figures, so that every rank throws the same exception
// naming the rank where it happened ("on rank 3: ..."); any other failure
// travels as its message. get across ranks sends these in its kError
// messages; agree_on_task_errors gives the same errors to collective steps
// that run tasks outside such a run (rechunk_store across ranks).
#pragma once

#include <cstddef>
#include <cstdint>
#include <exception>
#include <span>
#include <string>
#include <vector>

#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::detail {

//! A failure on rank `rank`, in the fields it travels with.
struct RemoteError {
  enum Kind : uint8_t { kOther = 0, kTask = 1, kMemory = 2 };
  int rank = -1;
  Kind kind = kOther;  // kOther: `message` is the error's what()
  std::string key_name, function, message;  // kMemory: `message` is the reason (memory_why)
  std::vector<int64_t> key_index;
  uint64_t needed = 0, limit = 0, held = 0;  // kMemory
  std::vector<MemoryLimitError::Held> largest;  // kMemory
};

//! `error`, raised on rank `rank`, as it travels.
RemoteError remote_error(const std::exception_ptr& error, int rank);

//! Its bytes on the wire.
std::vector<std::byte> encode_error(const RemoteError& e);

//! The error in `bytes`, sent by rank `source`; throws Error when they are not one.
RemoteError decode_error(std::span<const std::byte> bytes, int source);

//! The exception every rank throws for `e`: a TaskError or MemoryLimitError
//! with e's key, its message naming e.rank; otherwise an Error naming it.
std::exception_ptr rank_error(const RemoteError& e);

//! agree_on_errors (tessera/comm/communicator.hpp) that keeps a task's error:
//! runs `step`, and when it threw on any rank, every rank throws rank_error()
//! of the lowest rank whose step raised a TaskError or MemoryLimitError (the
//! same exception on every rank, naming that rank); when none did,
//! agree_on_errors' Error naming every rank that failed. Collective.
void agree_on_task_errors(Communicator& comm, FunctionRef<void()> step);

}  // namespace tessera::detail
