// A request to several engines: completion, waiting, and the errors it gathers.
#include "tessera/spmd/detail/job.hpp"

#include <algorithm>
#include <climits>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "tessera/spmd/async_result.hpp"
#include "tessera/spmd/error.hpp"
#include "futex.hpp"
#include "polling.hpp"

namespace tessera::spmd::detail {
namespace {

// A caller waiting for a result polls (yielding its core) this long before it
// sleeps: a short request then finishes without the caller sleeping and being
// woken, and its vCPU does not halt meanwhile (see polling.hpp).
constexpr std::chrono::microseconds kCallerPoll{50};

}  // namespace

Job::Job(std::string method, std::vector<int> engine_ids, Work work)
    : method_(std::move(method)),
      ids_(std::move(engine_ids)),
      work_(std::move(work)),
      values_(ids_.size()),
      errors_(ids_.size()),
      remaining_(ids_.size()) {}

void Job::run(Engine& engine, size_t slot) noexcept {
  Value value;
  std::exception_ptr error;
  try {
    value = work_(engine, slot);
  } catch (...) {
    error = std::current_exception();
  }
  finish(slot, std::move(value), std::move(error));
}

void Job::finish(size_t slot, Value value, std::exception_ptr error) noexcept {
  if (error) {
    errors_[slot] = std::move(error);
  } else {
    values_[slot] = std::move(value);
  }
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    finished_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    // seq_cst: ordered before the load of waiters_, as wait() orders its increment
    // of waiters_ before its load of done_ (one of the two sees the other).
    done_.store(1, std::memory_order_seq_cst);
    if (waiters_.load(std::memory_order_seq_cst) != 0) futex_wake(done_, INT_MAX);
  }
}

bool Job::wait(std::chrono::duration<double> timeout) const {
  if (ready()) return true;
  if (timeout.count() == 0) return false;
  // Negative means forever; so does anything past a few decades (and it keeps
  // now + timeout from overflowing).
  const bool forever = timeout.count() < 0 || timeout.count() > 1e9;
  const Clock::time_point deadline =
      forever ? Clock::time_point::max() : Clock::now() + std::chrono::duration_cast<Clock::duration>(timeout);
  std::chrono::microseconds window = kCallerPoll;
  if (!forever) window = std::min(window, std::chrono::ceil<std::chrono::microseconds>(timeout));
  if (poll_yielding([this] { return ready(); }, window) == PollResult::ready) return true;
  // Sleep on done_; run() makes the wake syscall only when waiters_ is non-zero.
  waiters_.fetch_add(1, std::memory_order_seq_cst);
  bool done;
  while (!(done = done_.load(std::memory_order_seq_cst) != 0)) {
    if (!forever && Clock::now() >= deadline) break;
    futex_wait(done_, 0, forever ? nullptr : &deadline);
  }
  waiters_.fetch_sub(1, std::memory_order_relaxed);
  return done;
}

bool Job::failed() const {
  for (const auto& e : errors_) {
    if (e) return true;
  }
  return false;
}

void Job::rethrow_errors() const {
  std::vector<RemoteError> errors;
  for (size_t slot = 0; slot < errors_.size(); ++slot) {
    if (errors_[slot]) errors.push_back(make_remote_error(ids_[slot], method_, errors_[slot]));
  }
  if (!errors.empty()) throw CompositeError(method_, std::move(errors));
}

std::chrono::duration<double> Job::elapsed() const {
  Clock::time_point end = ready() ? Clock::time_point(Clock::duration(finished_.load(std::memory_order_relaxed)))
                                  : Clock::now();
  return end - submitted_;
}

void wait_or_throw(const Job& job, std::chrono::duration<double> timeout) {
  if (!job.wait(timeout)) {
    throw TimeoutError(absl::StrFormat("%s: result not ready after %g s (%d of %d engines still running)",
                                       job.method(), timeout.count(), job.pending(),
                                       job.engine_ids().size()));
  }
  job.rethrow_errors();
}

void throw_result_type(const Job& job, size_t slot, const TypeError& e) {
  throw TypeError(absl::StrCat(job.method(), " result of engine ", job.engine_ids()[slot], ": ", e.what()));
}

}  // namespace tessera::spmd::detail
