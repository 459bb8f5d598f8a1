// place(): which rank runs each task when a run spreads over ranks. Blocks go
// by their position in their array's grid, other keys by contiguous runs of
// `order`, and a task whose block inputs are on one rank follows them.
#include <doctest/doctest.h>

#include <map>
#include <set>
#include <string>
#include <vector>

#include "tessera/across/placement.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;

namespace placement_test {  // named: a unity build merges the test files' anonymous namespaces

namespace {

int one(int x) { return x + 1; }
int two(int a, int b) { return a + b; }

int owner_of(const Plan& plan, const std::vector<int>& owner, const Key& key) {
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    if (plan.key(t) == key) return owner[t];
  }
  FAIL("no task ", key.str());
  return -1;
}

}  // namespace

// x: 4 x 4 blocks; y = x + 1 block by block; s = ("s",) sums row i of y.
//   x(i, j) -> y(i, j) -> s(i)
TEST_CASE("blocks go to ranks in contiguous runs of their grid, and an element-wise step follows its input") {
  Graph g;
  std::vector<Keys> want;
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 4; ++j) {
      g.task(Key("x", {i, j}), one, static_cast<int>(i * 4 + j));
      g.task(Key("y", {i, j}), one, ref(Key("x", {i, j})));
    }
    g.task(Key("s", {i}), two, ref(Key("y", {i, 0})), ref(Key("y", {i, 3})));
    want.emplace_back(Key("s", {i}));
    for (int64_t j = 1; j < 3; ++j) want.emplace_back(Key("y", {i, j}));
  }
  const Plan plan(g, Keys(std::move(want)));
  for (int ranks : {1, 2, 4, 3}) {
    CAPTURE(ranks);
    const std::vector<int> owner = place(plan, ranks);
    for (int64_t i = 0; i < 4; ++i) {
      for (int64_t j = 0; j < 4; ++j) {
        const int64_t b = i * 4 + j;
        CHECK(owner_of(plan, owner, Key("x", {i, j})) == static_cast<int>(b * ranks / 16));
        CHECK(owner_of(plan, owner, Key("y", {i, j})) == owner_of(plan, owner, Key("x", {i, j})));
      }
      CHECK(owner_of(plan, owner, Key("s", {i})) == static_cast<int>(i * ranks / 4));
    }
  }
}

// Eight chains of eight tasks without indices, c<k>_0 -> c<k>_1 -> ... -> c<k>_7:
// order runs each chain through, so cutting order into runs keeps chains whole.
TEST_CASE("keys without indices go to ranks in runs of order, so chains stay on one rank") {
  Graph g;
  std::vector<Keys> want;
  for (int c = 0; c < 8; ++c) {
    const std::string name = std::string("c").append(std::to_string(c)).append("_");
    g.put(name + "0", c);
    for (int k = 1; k < 8; ++k) g.task(name + std::to_string(k), one, tessera::ref(name + std::to_string(k - 1)));
    want.emplace_back(name + "7");
  }
  const Plan plan(g, Keys(std::move(want)));
  const std::vector<int> owner = place(plan, 4);
  std::map<int, std::set<int>> chains_of_rank;
  for (int c = 0; c < 8; ++c) {
    const std::string name = std::string("c").append(std::to_string(c)).append("_");
    const int first = owner_of(plan, owner, Key(name + "1"));
    for (int k = 2; k < 8; ++k) CHECK(owner_of(plan, owner, Key(name + std::to_string(k))) == first);
    chains_of_rank[first].insert(c);
  }
  CHECK(chains_of_rank.size() == 4);  // 56 tasks in runs of 14: two chains per rank
  for (const auto& [rank, chains] : chains_of_rank) CHECK(chains.size() == 2);
}

// A tree sum over blocks, as bench/graphs/tree_graph.py writes it: ("sum", 0, j)
// are 64 leaves, ("sum", level, j) adds children 2j and 2j + 1 of the level below.
// By the grid rule alone the name "sum" is one grid numbered level by level, so
// level 1 would sit on other ranks than its leaves; following the inputs keeps
// every subtree on its leaves' rank, and only the top levels travel.
TEST_CASE("a task whose block inputs are all on one rank runs there: a tree sum stays with its leaves") {
  Graph g;
  int64_t width = 64, level = 0;
  for (int64_t j = 0; j < width; ++j) g.task(Key("sum", {0, j}), one, static_cast<int>(j));
  for (; width > 1; width /= 2, ++level) {
    for (int64_t j = 0; j < width / 2; ++j) {
      g.task(Key("sum", {level + 1, j}), two, ref(Key("sum", {level, 2 * j})), ref(Key("sum", {level, 2 * j + 1})));
    }
  }
  const Plan plan(g, Key("sum", {level, 0}));
  const std::vector<int> owner = place(plan, 4);
  int crossing = 0;
  for (uint32_t t = 0; t < plan.num_tasks(); ++t) {
    for (uint32_t d : plan.dependencies(t)) crossing += owner[d] != owner[t] ? 1 : 0;
  }
  CHECK(crossing == 3);  // the 4 subtrees of 16 leaves meet in 3 edges that cross ranks
  std::map<int, int> leaves_per_rank;
  for (int64_t j = 0; j < 64; ++j) {
    const int r = owner_of(plan, owner, Key("sum", {0, j}));
    leaves_per_rank[r] += 1;
    CHECK(owner_of(plan, owner, Key("sum", {1, j / 2})) == r);
    CHECK(owner_of(plan, owner, Key("sum", {4, j / 16})) == r);
  }
  CHECK(leaves_per_rank == std::map<int, int>{{0, 16}, {1, 16}, {2, 16}, {3, 16}});
}

// A rechunk's split: each block of x is cut into two pieces p (numbered piece
// first, so p's own grid would put them elsewhere), and each block of y joins a
// piece of two blocks of x on other ranks. The pieces are cut where
// their block is; y goes by its grid. Every block of z reads only the scalar "k"
// (no indices): they stay spread by their grid, not pulled to the rank of k.
TEST_CASE("pieces are cut where their block is, and a scalar read by every block does not pull them together") {
  Graph g;
  g.task("k", one, 1);
  for (int64_t i = 0; i < 4; ++i) {
    g.task(Key("x", {i}), one, static_cast<int>(i));
    for (int64_t h = 0; h < 2; ++h) g.task(Key("p", {h, i}), one, ref(Key("x", {i})));
    g.task(Key("z", {i}), two, ref("k"), static_cast<int>(i));
  }
  std::vector<Keys> want;
  for (int64_t i = 0; i < 4; ++i) {
    g.task(Key("y", {i}), two, ref(Key("p", {0, i})), ref(Key("p", {1, 3 - i})));
    want.emplace_back(Key("y", {i}));
    want.emplace_back(Key("z", {i}));
  }
  const Plan plan(g, Keys(std::move(want)));
  const std::vector<int> owner = place(plan, 4);
  for (int64_t i = 0; i < 4; ++i) {
    CAPTURE(i);
    CHECK(owner_of(plan, owner, Key("x", {i})) == i);
    CHECK(owner_of(plan, owner, Key("p", {0, i})) == i);
    CHECK(owner_of(plan, owner, Key("p", {1, i})) == i);
    CHECK(owner_of(plan, owner, Key("y", {i})) == i);
    CHECK(owner_of(plan, owner, Key("z", {i})) == i);
  }
}

// A shuffle's shape: ("buf", 1) a process-local buffer, ("w", i) writes block
// x(i) into it, ("bar", 1) (process-local too) waits for every w, ("out", j)
// are views of it. Every w and out runs on buf's rank, though x is spread.
//   buf --> w(i) <-- x(i);  buf, w(*) --> bar --> out(j)
TEST_CASE("readers of a process-local result run on its rank, through process-local readers") {
  Graph g;
  const auto local_one = fn(std::string(kProcessLocal) + "one", one);
  const auto local_two = fn(std::string(kProcessLocal) + "two", two);
  g.task(Key("buf", {1}), local_one, 0);
  std::vector<Arg> writes;
  for (int64_t i = 0; i < 8; ++i) {
    g.task(Key("x", {i}), one, static_cast<int>(i));
    g.task(Key("w", {i}), two, ref(Key("x", {i})), ref(Key("buf", {1})));
    writes.emplace_back(ref(Key("w", {i})));
  }
  g.put(Key("bar", {1}), Task(local_two, ref(Key("buf", {1})), ArgList{std::move(writes)}));
  std::vector<Keys> want;
  for (int64_t j = 0; j < 8; ++j) {
    g.task(Key("out", {j}), one, ref(Key("bar", {1})));
    want.emplace_back(Key("out", {j}));
  }
  const Plan plan(g, Keys(want));
  const std::vector<int> owner = place(plan, 4);
  const int home = owner_of(plan, owner, Key("buf", {1}));
  CHECK(owner_of(plan, owner, Key("bar", {1})) == home);
  std::set<int> x_ranks;
  for (int64_t i = 0; i < 8; ++i) {
    x_ranks.insert(owner_of(plan, owner, Key("x", {i})));
    CHECK(owner_of(plan, owner, Key("w", {i})) == home);
    CHECK(owner_of(plan, owner, Key("out", {i})) == home);
  }
  CHECK(x_ranks.size() == 4);  // the blocks themselves stay spread
}

TEST_CASE("place refuses fewer than one rank") {
  Graph g;
  g.task("a", one, 1);
  CHECK_THROWS_WITH_AS(place(Plan(g, "a"), 0), "place: expected at least 1 rank, found 0", ValueError);
}

}  // namespace placement_test
