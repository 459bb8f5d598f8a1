// A request to several engines: completion, waiting, and the errors it gathers.
#include "tessera/spmd/detail/job.hpp"

#include <thread>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "tessera/spmd/async_result.hpp"
#include "tessera/spmd/error.hpp"

namespace tessera::spmd::detail {
namespace {

// A caller waiting for a result polls this long (yielding its core) before it
// sleeps: short requests then finish without a sleep and a wake-up on the
// caller's side, which measured as the best trade on an oversubscribed machine.
constexpr std::chrono::microseconds kPollWindow{50};

template <class Done>
void poll_until(Done done, std::chrono::microseconds window) {
  auto deadline = std::chrono::steady_clock::now() + window;
  do {
    for (int i = 0; i < 16; ++i) {
      if (done()) return;
      std::this_thread::yield();
    }
  } while (std::chrono::steady_clock::now() < deadline);
}

}  // namespace

Job::Job(std::string method, std::vector<int> engine_ids, Work work)
    : method_(std::move(method)),
      ids_(std::move(engine_ids)),
      work_(std::move(work)),
      values_(ids_.size()),
      errors_(ids_.size()),
      remaining_(ids_.size()) {}

void Job::run(Engine& engine, size_t slot) noexcept {
  try {
    values_[slot] = work_(engine, slot);
  } catch (...) {
    errors_[slot] = std::current_exception();
  }
  if (remaining_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    finished_.store(Clock::now().time_since_epoch().count(), std::memory_order_relaxed);
    {
      std::lock_guard<std::mutex> lock(mu_);
      done_.store(true, std::memory_order_release);
    }
    cv_.notify_all();
  }
}

bool Job::wait(std::chrono::duration<double> timeout) const {
  if (ready()) return true;
  if (timeout.count() < 0 || timeout > kPollWindow) {
    poll_until([this] { return ready(); }, kPollWindow);
    if (ready()) return true;
  }
  std::unique_lock<std::mutex> lock(mu_);
  auto done = [this] { return done_.load(std::memory_order_acquire); };
  if (timeout.count() < 0) {
    cv_.wait(lock, done);
    return true;
  }
  return cv_.wait_for(lock, timeout, done);
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
