#include "tessera/graph/token.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <random>

namespace tessera {
namespace {

// FNV-1a over the parts, each followed by a separator byte so ("ab", "c") and
// ("a", "bc") differ; then a splitmix64 finalizer to spread the bits.
uint64_t hash_parts(std::initializer_list<std::string_view> parts) {
  uint64_t h = 0xcbf29ce484222325ULL;
  auto mix = [&](unsigned char c) {
    h ^= c;
    h *= 0x100000001b3ULL;
  };
  for (std::string_view p : parts) {
    for (char c : p) mix(static_cast<unsigned char>(c));
    mix(0xff);
  }
  h ^= h >> 30;
  h *= 0xbf58476d1ce4e5b9ULL;
  h ^= h >> 27;
  h *= 0x94d049bb133111ebULL;
  h ^= h >> 31;
  return h;
}

std::string hex16(uint64_t h) {
  char buf[17];
  std::snprintf(buf, sizeof buf, "%016llx", static_cast<unsigned long long>(h));
  return buf;
}

// unique_token's salt and counter.
struct UniqueTokens {
  std::atomic<uint64_t> salt{std::random_device{}() ^
                             static_cast<uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count())};
  std::atomic<uint64_t> counter{0};
};

UniqueTokens& unique_tokens() {
  static UniqueTokens t;
  return t;
}

}  // namespace

std::string token(std::initializer_list<std::string_view> parts) { return hex16(hash_parts(parts)); }

std::string unique_token() {
  // A per-process random salt keeps tokens of two processes apart too (they may
  // meet in one graph file or profile); the ranks of one job share theirs
  // (seed_unique_tokens).
  UniqueTokens& t = unique_tokens();
  std::string s = std::to_string(t.salt.load()), n = std::to_string(t.counter.fetch_add(1));
  return token({"unique", s, n});
}

void seed_unique_tokens(uint64_t seed) {
  UniqueTokens& t = unique_tokens();
  t.salt.store(seed);
  t.counter.store(0);
}

}  // namespace tessera
