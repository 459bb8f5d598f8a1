// The Inbox: the public class forwards to InboxState, which the run shares
// with the delivering threads (inbox_state.hpp says how they meet).
#include "tessera/scheduler/inbox.hpp"

#include <absl/strings/str_cat.h>

#include "inbox_state.hpp"
#include "tessera/graph/error.hpp"

namespace tessera {
namespace detail {

InboxState& inbox_state(const Inbox& inbox) { return *inbox.state_; }

InboxState::InboxState(std::span<const Key> keys) : keys_(keys.begin(), keys.end()) {
  index_.reserve(keys_.size());
  for (size_t i = 0; i < keys_.size(); ++i) {
    if (!index_.emplace(keys_[i], static_cast<uint32_t>(i)).second) {
      throw ValueError(absl::StrCat("Inbox: expected distinct keys, found ", keys_[i].brief(), " twice"));
    }
  }
  values_.resize(keys_.size());
  delivered_.assign(keys_.size(), 0);
  order_.reserve(keys_.size());
}

int64_t InboxState::index_of(const Key& key) const {
  auto it = index_.find(key);
  return it == index_.end() ? -1 : static_cast<int64_t>(it->second);
}

void InboxState::deliver(const Key& key, Value value) {
  const int64_t i = index_of(key);
  if (i < 0) {
    throw ValueError(absl::StrCat("Inbox::deliver: key ", key.brief(), " is not one of the inbox's ",
                                  keys_.size(), " declared keys"));
  }
  std::lock_guard lk(mutex_);
  if (delivered_[i]) throw ValueError(absl::StrCat("Inbox::deliver: key ", key.brief(), " was delivered already"));
  delivered_[i] = 1;
  ++delivered_count_;
  if (closed_) return;  // the run is over: nobody will take it
  untaken_bytes_.fetch_add(value.nbytes(), std::memory_order_acq_rel);
  values_[i] = std::move(value);
  order_.push_back(static_cast<uint32_t>(i));
  arrived_.store(order_.size(), std::memory_order_seq_cst);
  wake_locked();
}

void InboxState::sent(size_t request) {
  std::lock_guard lk(mutex_);
  if (closed_) return;
  order_.push_back(static_cast<uint32_t>(keys_.size() + request));
  arrived_.store(order_.size(), std::memory_order_seq_cst);
  wake_locked();
}

void InboxState::fail(std::exception_ptr error) {
  std::lock_guard lk(mutex_);
  if (failed_.load(std::memory_order_relaxed)) return;
  error_ = std::move(error);
  failed_.store(true, std::memory_order_seq_cst);
  wake_locked();
}

// The watching worker waits on changed_; the others sleep on the run's epoch.
// The epoch is bumped after the news is stored, and a worker reads the epoch
// before it looks for news (Run::sleep_locked), so either it sees the news or
// its wait sees the bump.
void InboxState::wake_locked() {
  changed_.notify_all();
  if (epoch_ != nullptr) {
    epoch_->fetch_add(1, std::memory_order_seq_cst);
    epoch_->notify_all();
  }
}

size_t InboxState::pending() const {
  std::lock_guard lk(mutex_);
  return keys_.size() - delivered_count_;
}

void InboxState::attach(std::atomic<uint32_t>* epoch) {
  std::lock_guard lk(mutex_);
  if (used_) throw ValueError("GetOptions::inbox: expected a fresh Inbox, found one that served a run already");
  used_ = true;
  epoch_ = epoch;
}

void InboxState::detach() {
  std::vector<Value> drop;
  {
    std::lock_guard lk(mutex_);
    epoch_ = nullptr;
    closed_ = true;
    drop.swap(values_);
    untaken_bytes_.store(0, std::memory_order_release);
  }
  // The values are destroyed outside the lock (a destructor may take long).
}

size_t InboxState::take(size_t taken, std::vector<std::pair<uint32_t, Value>>& out) {
  std::lock_guard lk(mutex_);
  for (size_t j = taken; j < order_.size(); ++j) {
    const uint32_t i = order_[j];
    if (i >= keys_.size()) {  // a send
      out.emplace_back(i, Value());
      continue;
    }
    untaken_bytes_.fetch_sub(values_[i].nbytes(), std::memory_order_acq_rel);
    out.emplace_back(i, std::move(values_[i]));
  }
  return order_.size();
}

std::exception_ptr InboxState::error() const {
  std::lock_guard lk(mutex_);
  return error_;
}

void InboxState::wait(size_t seen, std::chrono::milliseconds timeout) {
  std::unique_lock lk(mutex_);
  changed_.wait_for(lk, timeout,
                    [&] { return order_.size() != seen || failed_.load(std::memory_order_relaxed); });
}

}  // namespace detail

Inbox::Inbox(std::span<const Key> keys) : state_(std::make_unique<detail::InboxState>(keys)) {}
Inbox::~Inbox() = default;
void Inbox::deliver(const Key& key, Value value) { state_->deliver(key, std::move(value)); }
void Inbox::fail(std::exception_ptr error) { state_->fail(std::move(error)); }
const std::vector<Key>& Inbox::keys() const { return state_->keys(); }
bool Inbox::contains(const Key& key) const { return state_->index_of(key) >= 0; }
size_t Inbox::pending() const { return state_->pending(); }
size_t Inbox::untaken_bytes() const { return state_->untaken_bytes(); }
bool Inbox::failed() const { return state_->failed(); }
void Inbox::set_returned(size_t n) { state_->set_returned(n); }
void Inbox::sent(size_t request) { state_->sent(request); }

}  // namespace tessera
