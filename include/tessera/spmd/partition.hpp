// tessera/spmd/partition.hpp — how an SPMD function finds its share of the work.
//
// In single-program-multiple-data code every engine runs the same function and
// works out its own slice from its rank and the number of engines. `get_partition`
// gives that slice as a half-open range [begin, end): chunks of ceil(n / size)
// items, the last ones shorter or empty, so for n = 10
//
//   size 3: (0,4) (4,8) (8,10)
//   size 4: (0,3) (3,6) (6,9) (9,10)
//   size 5: (0,2) (2,4) (4,6) (6,8) (8,10)
//
// `flatten` joins the per-engine lists an apply returns into one list, in rank
// order, which gives back the sequential order of the items.
//
// (`BroadcastView::scatter` splits a sequence as ipyparallel's scatter does
// instead: sizes differ by at most one, the larger parts first.)
//
// @code
//   std::vector<std::string> work(const std::vector<std::string>& items, int rank, int size) {
//     auto [begin, end] = tessera::spmd::get_partition(items.size(), rank, size);
//     return {items.begin() + begin, items.begin() + end};
//   }
//   auto all = tessera::spmd::flatten(view.apply(work, items, Reference("rank"), n).get());
// @endcode
//
// Thread-safe: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <utility>
#include <vector>

namespace tessera::spmd {

//! The half-open range [begin, end) of `n_items` that `rank` of `size` engines
//! handles. Throws tessera::Error when `size` < 1, `rank` is not in [0, size) or
//! `n_items` < 0.
std::pair<int64_t, int64_t> get_partition(int64_t n_items, int64_t rank, int64_t size);

//! The per-engine lists joined in order: flatten({{a, b}, {}, {c}}) == {a, b, c}.
template <class T>
std::vector<T> flatten(const std::vector<std::vector<T>>& parts) {
  size_t total = 0;
  for (const auto& p : parts) total += p.size();
  std::vector<T> out;
  out.reserve(total);
  for (const auto& p : parts) out.insert(out.end(), p.begin(), p.end());
  return out;
}

namespace detail {

//! ipyparallel's block distribution for scatter: part `p` of `q` parts of `n`
//! items; the first n % q parts hold one item more.
std::pair<size_t, size_t> scatter_bounds(size_t n, size_t p, size_t q);

}  // namespace detail
}  // namespace tessera::spmd
