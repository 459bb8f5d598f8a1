#include "tessera/spmd/partition.hpp"

#include <algorithm>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::spmd {

std::pair<int64_t, int64_t> get_partition(int64_t n_items, int64_t rank, int64_t size) {
  if (size < 1) throw Error(absl::StrCat("get_partition: size must be at least 1, but it is ", size));
  if (rank < 0 || rank >= size) {
    throw Error(absl::StrCat("get_partition: rank must be in [0, ", size, "), but it is ", rank));
  }
  if (n_items < 0) throw Error(absl::StrCat("get_partition: n_items must be at least 0, but it is ", n_items));
  int64_t chunk = (n_items + size - 1) / size;  // ceil: every part but the last ones is full
  int64_t begin = std::min(rank * chunk, n_items);
  return {begin, std::min(begin + chunk, n_items)};
}

namespace detail {

std::pair<size_t, size_t> scatter_bounds(size_t n, size_t p, size_t q) {
  size_t base = n / q, remainder = n % q;
  size_t begin = p * base + std::min(p, remainder);
  return {begin, begin + base + (p < remainder ? 1 : 0)};
}

}  // namespace detail
}  // namespace tessera::spmd
