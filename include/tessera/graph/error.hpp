// tessera/graph/error.hpp — every exception tessera throws.
//
// One hierarchy rooted at tessera::Error (a std::runtime_error), so a caller can
// catch everything from tessera in one place or one kind precisely. Messages say
// what was expected and what was found, with the context (key, path) that lets a
// user act on them.
//
// @code
//   try { tessera::get(g, "w"); }
//   catch (const tessera::TaskError& e) { std::cerr << e.key() << ": " << e.message(); }
// @endcode
#pragma once

#include <exception>
#include <cstddef>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include "tessera/graph/key.hpp"

namespace tessera {

//! The root of tessera's exceptions.
class Error : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

//! A value had another type than the one asked for.
class TypeError : public Error {
 public:
  using Error::Error;
};

//! An argument a function does not accept: a codec spec, a storage format, a
//! count or a list of the wrong size (where the standard library would throw
//! std::invalid_argument).
class ValueError : public Error {
 public:
  using Error::Error;
};

//! A codec or filter spec (`blosc:zstd:5`, `delta:<i4`) that does not parse, or
//! that the storage format cannot take: the ValueError a caller passing a
//! user's `--codec` / `codec=` reports as that option's fault.
class CodecSpecError : public ValueError {
 public:
  using ValueError::ValueError;
};

//! The graph has a cycle; what() prints it as `a -> b -> a`.
class CycleError : public Error {
 public:
  //! `context`, when given, prefixes the message (e.g. the file the graph came from).
  explicit CycleError(std::vector<Key> cycle, const std::string& context = {});
  //! The keys along the cycle, the first repeated at the end.
  const std::vector<Key>& cycle() const { return cycle_; }

 private:
  std::vector<Key> cycle_;
};

//! A task refers to a key that is not in the graph (or a requested key is absent).
class MissingKeyError : public Error {
 public:
  //! `referrer` is the task that refers to `missing`; absent when the caller asked for it.
  //! `context`, when given, prefixes the message (e.g. the file the graph came from).
  MissingKeyError(Key missing, std::optional<Key> referrer, const std::string& context = {});
  //! The key that is not in the graph.
  const Key& missing() const { return missing_; }
  //! The task or alias that refers to it, when known.
  const std::optional<Key>& referrer() const { return referrer_; }

 private:
  Key missing_;
  std::optional<Key> referrer_;
};

//! A task threw. Carries the key, the task's function name, the original message
//! and the original exception.
class TaskError : public Error {
 public:
  //! Task `key`, running `function`, raised `original`.
  TaskError(Key key, std::string function, std::exception_ptr original);
  //! The task that failed.
  const Key& key() const { return key_; }
  //! The name of its function.
  const std::string& function() const { return function_; }
  //! what() of the original exception (or a description when it was not a std::exception).
  const std::string& message() const { return message_; }
  //! The exception the task raised.
  const std::exception_ptr& original() const { return original_; }
  //! Throws the original exception.
  [[noreturn]] void rethrow_original() const { std::rethrow_exception(original_); }

 private:
  Key key_;
  std::string function_;
  std::string message_;
  std::exception_ptr original_;
};

//! A run was stopped through its cancellation token.
class Cancelled : public Error {
 public:
  using Error::Error;
};

//! A run with a memory limit could not keep within it: one task needed more than
//! the limit (its inputs and its result), or nothing left in memory could spill.
//! Names the task, the bytes it needed, and the largest results held.
class MemoryLimitError : public Error {
 public:
  //! One held result: its key and bytes.
  struct Held {
    //! The result's key.
    Key key;
    //! Its accounted size.
    size_t bytes;
  };
  //! `largest` is sorted, largest first (a few entries).
  MemoryLimitError(Key task, size_t needed, size_t limit, size_t held, std::vector<Held> largest,
                   const std::string& why);
  //! The task that could not run (or whose result did not fit).
  const Key& task() const { return task_; }
  //! Bytes it needed: its inputs plus, once known, its result.
  size_t needed() const { return needed_; }
  //! GetOptions::memory_limit.
  size_t limit() const { return limit_; }
  //! Bytes held when the run stopped.
  size_t held() const { return held_; }
  //! The largest results held when the run gave up, largest first.
  const std::vector<Held>& largest() const { return largest_; }

 private:
  Key task_;
  size_t needed_, limit_, held_;
  std::vector<Held> largest_;
};

//! A chunk specification does not fit the array.
class ChunkError : public Error {
 public:
  using Error::Error;
};

//! A memory budget (a rechunk's max_mem) that cannot hold what the work must
//! hold at once, a block, a shard's index or the task graph: found before
//! anything is built or written; names the budget and what passes it.
class BudgetError : public ChunkError {
 public:
  using ChunkError::ChunkError;
};

//! A file or store could not be read or written; names the path and, when an OS
//! call failed, the errno text.
class StorageError : public Error {
 public:
  //! `what` describes the problem; `err` is an errno value, 0 when none applies.
  StorageError(std::string path, const std::string& what, int err = 0);
  //! The file or folder concerned.
  const std::string& path() const { return path_; }
  //! The errno value (0 when none).
  int error_code() const { return errno_; }

 private:
  std::string path_;
  int errno_;
};

//! The message of an exception_ptr's exception, for error reports.
std::string describe(const std::exception_ptr& e);

}  // namespace tessera
