// The state an Inbox shares between the delivering threads and the run that
// takes its values. One mutex guards it; the run reads `arrived` without it to
// see, between tasks, whether anything came (one load per pop), and takes the
// mutex only to take what came. Lock order: the run's lock, then this mutex; a
// delivery holds only this one (it wakes the run through the run's epoch, an
// atomic, never through the run's lock).
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <exception>
#include <mutex>
#include <span>
#include <utility>
#include <vector>

#include <absl/container/flat_hash_map.h>

#include "tessera/graph/key.hpp"
#include "tessera/graph/value.hpp"

namespace tessera::detail {

class InboxState {
 public:
  explicit InboxState(std::span<const Key> keys);

  void deliver(const Key& key, Value value);
  void fail(std::exception_ptr error);
  const std::vector<Key>& keys() const { return keys_; }
  //! The index of `key` among keys(), or -1.
  int64_t index_of(const Key& key) const;
  size_t pending() const;
  //! Bytes (Value::nbytes) of the values delivered and not taken by the run yet.
  size_t untaken_bytes() const { return untaken_bytes_.load(std::memory_order_acquire); }
  bool failed() const { return failed_.load(std::memory_order_acquire); }
  //! The caller's requested keys are the Plan's first `n`; the others are
  //! requested only so that the Plan keeps them: their results leave through a
  //! posttask hook (to other ranks), and the run releases each once its hooks
  //! ran and its local readers finished (a run across ranks sets it before the
  //! run starts; default: every requested key is the caller's).
  void set_returned(size_t n) { returned_ = n; }
  size_t returned() const { return returned_; }
  //! The result of requested key `request` (one past returned(): a result for
  //! other ranks) was handed on, in wire form: a run under a memory limit
  //! releases it now (it kept it counted and spillable until then; one without
  //! a limit released it after posttask already and ignores this). It comes to
  //! the run as a delivery does: take() gives it as index keys().size() + request.
  void sent(size_t request);

  // The run's side.
  //! Binds the run whose sleeping workers wait on `epoch`; throws ValueError
  //! when the inbox served a run already.
  void attach(std::atomic<uint32_t>* epoch);
  //! The run ended: values not taken are dropped, later ones too.
  void detach();
  //! Deliveries and sends so far; the run compares it with what it took.
  size_t arrived() const { return arrived_.load(std::memory_order_seq_cst); }
  //! Moves the deliveries after the first `taken` into `out` as (index, value),
  //! and the sends as (keys().size() + request, no value); returns the new count taken.
  size_t take(size_t taken, std::vector<std::pair<uint32_t, Value>>& out);
  //! The error given to fail(), once failed().
  std::exception_ptr error() const;
  //! Waits, without the run's lock, until a delivery after the first `seen`,
  //! a failure, or `timeout`.
  void wait(size_t seen, std::chrono::milliseconds timeout);

 private:
  void wake_locked();

  mutable std::mutex mutex_;
  std::condition_variable changed_;
  std::vector<Key> keys_;
  absl::flat_hash_map<Key, uint32_t> index_;
  std::vector<Value> values_;        // delivered, not taken yet
  std::vector<uint8_t> delivered_;   // per key
  std::vector<uint32_t> order_;      // indices in order of delivery; keys_.size() + request for a send
  size_t delivered_count_ = 0;
  std::atomic<size_t> untaken_bytes_{0};  // readable without the mutex
  std::atomic<size_t> arrived_{0};   // order_.size(), readable without the mutex
  std::atomic<bool> failed_{false};
  std::exception_ptr error_;
  std::atomic<uint32_t>* epoch_ = nullptr;  // the attached run's
  bool used_ = false, closed_ = false;
  size_t returned_ = SIZE_MAX;
};

}  // namespace tessera::detail
