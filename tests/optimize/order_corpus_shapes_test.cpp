// Shapes of the dask.array corpus (tests/data/graphs/make_corpus.py) on which
// tessera's order once held more results than dask's get_sync, written small
// with their structure only, so a change to order() that loses what fixed
// them fails here with a graph one can draw.
#include <doctest/doctest.h>

#include <vector>

#include "order_shapes.hpp"

using namespace tessera;
using namespace tessera::testing;

namespace {

Key k(const char* name, std::vector<int64_t> index) { return Key(name, std::move(index)); }

// What get_sync holds at most running `d` with order(), only `outputs` requested.
uint32_t held_with_order(const Dsk& d, const std::vector<Key>& outputs) {
  Ordered o(d.g);
  return sync_pressure(d.g, o.c, o.prio, outputs);
}

}  // namespace

TEST_CASE("order: (x + x.transpose(2, 0, 1)).sum(axis=1) pairs the blocks that close an add") {
  // x[a,b,c] on an N x N x N grid of blocks; the transposed block t[a,b,c]
  // reads x[b,c,a]; add[a,b,c] reads x[a,b,c] and t[a,b,c]; out[a,c] sums
  // part[a,b,c] = sum(add[a,b,c]) over b.
  //
  //   x[a,b,c] ──────────────► add[a,b,c] ─► part[a,b,c] ─┐
  //   x[b,c,a] ─► t[a,b,c] ──┘                            ├─► out[a,c]
  //                                 (the other b's) ──────┘
  //
  // Every block is read by two adds, one of which also waits for another
  // root, so each root looks dear alone and one-root greedy sequences open
  // outputs along the diagonal first: at N = 4 they held 31 results (dask's
  // get_sync on the real graph: 30). Looking one root ahead holds 28.
  constexpr int N = 4;
  Dsk d;
  std::vector<Key> outputs;
  for (int a = 0; a < N; ++a) {
    for (int b = 0; b < N; ++b) {
      for (int c = 0; c < N; ++c) d.task(k("x", {a, b, c}));
    }
  }
  for (int a = 0; a < N; ++a) {
    for (int b = 0; b < N; ++b) {
      for (int c = 0; c < N; ++c) {
        d.task(k("t", {a, b, c}), {k("x", {b, c, a})});
        d.task(k("add", {a, b, c}), {k("x", {a, b, c}), k("t", {a, b, c})});
        d.task(k("part", {a, b, c}), {k("add", {a, b, c})});
      }
    }
  }
  for (int a = 0; a < N; ++a) {
    for (int c = 0; c < N; ++c) {
      std::vector<Key> parts;
      for (int b = 0; b < N; ++b) parts.push_back(k("part", {a, b, c}));
      d.task(k("out", {a, c}), parts);
      outputs.push_back(k("out", {a, c}));
    }
  }
  CHECK(held_with_order(d, outputs) <= 28);
}

TEST_CASE("order: da.diff(x, axis=1).sum(axis=0) walks the columns in turn") {
  // x[i,j] on an R x C grid; split s[i,j]; the difference has 2C - 1 pieces
  // per row: piece 2j reads s[i,j] (the last one x[i,C-1] itself), piece
  // 2j+1 reads s[i,j] and s[i,j+1]; each is summed, and agg[k] adds piece k
  // of every row.
  //
  //   x[i,j] ─► s[i,j] ─► sub[i,2j]   ─► sum[i,2j]   ─► agg[2j]
  //                  └──► sub[i,2j+1] ─► sum[i,2j+1] ─► agg[2j+1]
  //   x[i,j+1] ─► s[i,j+1] ──┘
  //
  // A run that leaves column j for a column further away keeps the pieces of
  // column j waiting for their right-hand neighbours meanwhile. At R = C = 4
  // tessera's order held 18 before it preferred the leaf whose roots had run
  // the most and looked one root ahead; it holds 14.
  constexpr int R = 4, C = 4;
  Dsk d;
  std::vector<Key> outputs;
  for (int i = 0; i < R; ++i) {
    for (int j = 0; j < C; ++j) {
      d.task(k("x", {i, j}));
      d.task(k("s", {i, j}), {k("x", {i, j})});
    }
  }
  for (int i = 0; i < R; ++i) {
    for (int p = 0; p < 2 * C - 1; ++p) {
      const int j = p / 2;
      if (p % 2 == 1) {
        d.task(k("sub", {i, p}), {k("s", {i, j}), k("s", {i, j + 1})});
      } else {
        d.task(k("sub", {i, p}), {j == C - 1 ? k("x", {i, j}) : k("s", {i, j})});
      }
      d.task(k("sum", {i, p}), {k("sub", {i, p})});
    }
  }
  for (int p = 0; p < 2 * C - 1; ++p) {
    std::vector<Key> sums;
    for (int i = 0; i < R; ++i) sums.push_back(k("sum", {i, p}));
    d.task(k("agg", {p}), sums);
    outputs.push_back(k("agg", {p}));
  }
  CHECK(held_with_order(d, outputs) <= 14);
}
