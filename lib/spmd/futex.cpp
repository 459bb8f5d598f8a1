#include "futex.hpp"

#include <linux/futex.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace tessera::spmd::detail {
namespace {

uint32_t* address(const std::atomic<uint32_t>& word) {
  // The kernel compares and sleeps on the integer itself; it never writes it.
  return const_cast<uint32_t*>(reinterpret_cast<const uint32_t*>(&word));
}

}  // namespace

void futex_wait(const std::atomic<uint32_t>& word, uint32_t expected,
                const std::chrono::steady_clock::time_point* deadline) {
  if (deadline == nullptr) {
    syscall(SYS_futex, address(word), FUTEX_WAIT_PRIVATE, expected, nullptr, nullptr, 0);
    return;
  }
  // FUTEX_WAIT_BITSET takes an absolute time on CLOCK_MONOTONIC, the clock behind
  // steady_clock on Linux, so a wait cut short by a spurious wake keeps its deadline.
  auto since_epoch = deadline->time_since_epoch();
  auto secs = std::chrono::duration_cast<std::chrono::seconds>(since_epoch);
  timespec ts{};
  ts.tv_sec = static_cast<time_t>(secs.count());
  ts.tv_nsec = static_cast<long>(std::chrono::duration_cast<std::chrono::nanoseconds>(since_epoch - secs).count());
  syscall(SYS_futex, address(word), FUTEX_WAIT_BITSET_PRIVATE, expected, &ts, nullptr, FUTEX_BITSET_MATCH_ANY);
}

void futex_wake(const std::atomic<uint32_t>& word, int count) {
  syscall(SYS_futex, address(word), FUTEX_WAKE_PRIVATE, count, nullptr, nullptr, 0);
}

}  // namespace tessera::spmd::detail
