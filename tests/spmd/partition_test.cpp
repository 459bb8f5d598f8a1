#include <doctest/doctest.h>

#include <utility>
#include <vector>

#include "tessera/graph/error.hpp"
#include "tessera/spmd/partition.hpp"

using namespace tessera;
using namespace tessera::spmd;

namespace {

std::vector<std::pair<int64_t, int64_t>> table(int64_t n, int64_t size) {
  std::vector<std::pair<int64_t, int64_t>> out;
  for (int64_t r = 0; r < size; ++r) out.push_back(get_partition(n, r, size));
  return out;
}

using P = std::vector<std::pair<int64_t, int64_t>>;

}  // namespace

TEST_CASE("get_partition gives the tutorial's table") {
  CHECK(table(10, 3) == P{{0, 4}, {4, 8}, {8, 10}});
  CHECK(table(10, 4) == P{{0, 3}, {3, 6}, {6, 9}, {9, 10}});
  CHECK(table(10, 5) == P{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}});
}

TEST_CASE("get_partition covers every item once, also with more engines than items") {
  CHECK(table(10, 1) == P{{0, 10}});
  CHECK(table(3, 5) == P{{0, 1}, {1, 2}, {2, 3}, {3, 3}, {3, 3}});
  CHECK(table(10, 6) == P{{0, 2}, {2, 4}, {4, 6}, {6, 8}, {8, 10}, {10, 10}});
  CHECK(table(0, 2) == P{{0, 0}, {0, 0}});
  for (int64_t n : {1, 7, 500, 1001}) {
    for (int64_t size : {1, 3, 8, 100}) {
      int64_t next = 0;
      for (auto [b, e] : table(n, size)) {
        CHECK(b == next);
        CHECK(e >= b);
        next = e;
      }
      CHECK(next == n);
    }
  }
}

TEST_CASE("get_partition rejects a bad rank, size or count") {
  REQUIRE_THROWS_WITH_AS(get_partition(10, 0, 0), "get_partition: size must be at least 1, but it is 0", Error);
  REQUIRE_THROWS_WITH_AS(get_partition(10, 4, 4), "get_partition: rank must be in [0, 4), but it is 4", Error);
  REQUIRE_THROWS_WITH_AS(get_partition(10, -1, 4), "get_partition: rank must be in [0, 4), but it is -1", Error);
  REQUIRE_THROWS_WITH_AS(get_partition(-2, 0, 4), "get_partition: n_items must be at least 0, but it is -2", Error);
}

TEST_CASE("flatten joins per-engine lists in rank order") {
  CHECK(flatten(std::vector<std::vector<int>>{{1, 2}, {}, {3}}) == std::vector<int>{1, 2, 3});
  CHECK(flatten(std::vector<std::vector<int>>{}).empty());
}

TEST_CASE("scatter's split is ipyparallel's: the larger parts first") {
  std::vector<std::pair<size_t, size_t>> parts;
  for (size_t p = 0; p < 3; ++p) parts.push_back(detail::scatter_bounds(10, p, 3));
  CHECK(parts == std::vector<std::pair<size_t, size_t>>{{0, 4}, {4, 7}, {7, 10}});
  CHECK(detail::scatter_bounds(2, 3, 4) == std::pair<size_t, size_t>{2, 2});
}
