// What a Key costs to copy (and destroy) and to find in a hash set: the price
// of counting interned names, which bench_leak shows keeps memory bounded.
// One thread, then two threads copying keys of one name at once (they share
// the name's count). Prints ns per key.
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <initializer_list>
#include <thread>
#include <vector>

#include <absl/container/flat_hash_set.h>

#include <tessera/graph/key.hpp>

int main() {
  using Clock = std::chrono::steady_clock;
  std::vector<tessera::Key> keys;
  for (int64_t i = 0; i < 1000; ++i) keys.emplace_back("x", std::initializer_list<int64_t>{i, 0});
  constexpr int kRounds = 10000;
  const double per_key = 1e-9 * static_cast<double>(kRounds) * static_cast<double>(keys.size());
  size_t sink = 0;
  auto copy_rounds = [&](int rounds) {
    for (int r = 0; r < rounds; ++r) {
      std::vector<tessera::Key> copy = keys;
      sink += copy.size();
    }
  };
  const auto t0 = Clock::now();
  copy_rounds(kRounds);
  const auto t1 = Clock::now();
  const absl::flat_hash_set<tessera::Key> set(keys.begin(), keys.end());
  for (int r = 0; r < kRounds; ++r) {
    for (const tessera::Key& k : keys) sink += set.contains(k);
  }
  const auto t2 = Clock::now();
  std::thread a(copy_rounds, kRounds / 2), b(copy_rounds, kRounds / 2);
  a.join();
  b.join();
  const auto t3 = Clock::now();
  auto ns = [&](Clock::duration d) { return std::chrono::duration<double>(d).count() / per_key; };
  std::printf("key copy+destroy %.1f ns   hash+find %.1f ns   copy+destroy, 2 threads on one name %.1f ns  (%zu)\n",
              ns(t1 - t0), ns(t2 - t1), ns(t3 - t2), sink);
}
