// Sleeping and waking on a 32-bit atomic word (Linux futex).
//
// Why raw futexes rather than std::condition_variable or C++20 atomic wait: the
// waker can tell from the word itself whether anyone sleeps, so a wake costs a
// syscall only when a thread really sleeps, and neither side takes a lock. (The
// C++20 atomic wait of libstdc++ 12 spins and yields for a while before it sleeps,
// which is what the callers here must decide for themselves.)
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>

namespace tessera::spmd::detail {

static_assert(sizeof(std::atomic<uint32_t>) == sizeof(uint32_t) && std::atomic<uint32_t>::is_always_lock_free,
              "a futex word must be a plain 32-bit integer");

//! Sleeps while `word` holds `expected` (returns at once when it does not), until
//! woken, until `deadline` on std::chrono::steady_clock when given, or spuriously.
void futex_wait(const std::atomic<uint32_t>& word, uint32_t expected,
                const std::chrono::steady_clock::time_point* deadline = nullptr);
//! Wakes up to `count` threads sleeping on `word`.
void futex_wake(const std::atomic<uint32_t>& word, int count);

}  // namespace tessera::spmd::detail
