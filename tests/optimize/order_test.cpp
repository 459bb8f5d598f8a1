// Shapes from dask's dask/tests/test_order.py, each asserting what dask asserts.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdlib>

#include "order_shapes.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::testing;

TEST_CASE("order: keeps groups together") {
  for (const std::string& n : name_orders()) {
    CAPTURE(n);
    const std::string a = s(n[0]), b = s(n[1]);
    //   b0      b1          b0      b1
    //  /  \    /  \   and  /  \    /  \       (second: crossed)
    // a0  a1  a2  a3      a0  a2  a1  a3
    for (bool crossed : {false, true}) {
      Dsk d;
      for (int i = 0; i < 4; ++i) d.task(Key(a, {i}));
      const int p = crossed ? 2 : 1, q = crossed ? 1 : 2;
      d.task(Key(b, {0}), {Key(a, {0}), Key(a, {p})});
      d.task(Key(b, {1}), {Key(a, {q}), Key(a, {3})});
      Ordered o(d.g);
      CHECK(std::abs(o(Key(a, {0})) - o(Key(a, {p}))) == 1);
      CHECK(std::abs(o(Key(a, {q})) - o(Key(a, {3}))) == 1);
    }
  }
}

TEST_CASE("order: avoids broker nodes") {
  //   b0    b1  b2
  //   |      \  /
  //   a0      a1        finish one branch before the other
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]);
    Dsk d;
    d.task(Key(a, {0}));
    d.task(Key(a, {1}));
    d.task(Key(b, {0}), {Key(a, {0})});
    d.task(Key(b, {1}), {Key(a, {1})});
    d.task(Key(b, {2}), {Key(a, {1})});
    Ordered o(d.g);
    CHECK((o(Key(a, {1})) < o(Key(b, {0})) ||
           (o(Key(b, {1})) < o(Key(a, {0})) && o(Key(b, {2})) < o(Key(a, {0})))));
  }
}

TEST_CASE("order: the base of a reduction is preferred") {
  //            a3
  //           /|
  //         a2 |
  //        /|  |
  //      a1 |  |
  //     /|  |  |
  //   a0 |  |  |
  //   |  |  |  |
  //   b0 b1 b2 b3
  //     \ \ / /
  //        c              run b0 quickly (c as data and as a task)
  for (const std::string& n : name_orders()) {
    for (bool data_root : {true, false}) {
      CAPTURE(n);
      CAPTURE(data_root);
      const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]);
      Dsk d;
      if (data_root) {
        d.data(c);
      } else {
        d.task(c);
      }
      for (int i = 0; i < 4; ++i) d.task(Key(b, {i}), {c});
      d.task(Key(a, {0}), {Key(b, {0})});
      for (int i = 1; i < 4; ++i) d.task(Key(a, {i}), {Key(a, {i - 1}), Key(b, {i})});
      Ordered o(d.g);
      CHECK(o(Key(b, {0})) <= 1);
      CHECK(o(Key(b, {1})) <= 3);
    }
  }
}

TEST_CASE("order: avoids upwards branching") {
  //    a1
  //    |
  //    a2
  //    |
  //    a3    d1
  //   /  \  /
  // b1    c1
  // |     |
  // b2    c2
  //       |
  //       c3
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]);
    Dsk d;
    d.task(Key(a, {1}), {Key(a, {2})});
    d.task(Key(a, {2}), {Key(a, {3})});
    d.task(Key(a, {3}), {Key(b, {1}), Key(c, {1})});
    d.task(Key(b, {1}), {Key(b, {2})});
    d.task(Key(c, {1}), {Key(c, {2})});
    d.task(Key(c, {2}), {Key(c, {3})});
    d.task(Key(dd, {1}), {Key(c, {1})});
    d.data(Key(c, {3}));
    d.data(Key(b, {2}));
    Ordered o(d.g);
    CHECK(o(Key(dd, {1})) < o(Key(b, {1})));
  }
}

TEST_CASE("order: avoids upwards branching, complex") {
  //      a1
  //      |
  // e2   a2  d2  d3
  // |    |    \  /
  // e1   a3    d1
  //  \  /  \  /
  //   b1    c1
  //   |     |
  //   b2    c2
  //         |
  //         c3        prefer c1 over b1; d2 and d3 together
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    Dsk d;
    d.task(Key(a, {1}), {Key(a, {2})});
    d.task(Key(a, {2}), {Key(a, {3})});
    d.task(Key(a, {3}), {Key(b, {1}), Key(c, {1})});
    d.task(Key(b, {1}), {Key(b, {2})});
    d.task(Key(b, {2}));
    d.task(Key(c, {1}), {Key(c, {2})});
    d.task(Key(c, {2}), {Key(c, {3})});
    d.task(Key(c, {3}));
    d.task(Key(dd, {1}), {Key(c, {1})});
    d.task(Key(dd, {2}), {Key(dd, {1})});
    d.task(Key(dd, {3}), {Key(dd, {1})});
    d.task(Key(e, {1}), {Key(b, {1})});
    d.task(Key(e, {2}), {Key(e, {1})});
    Ordered o(d.g);
    CHECK(o(Key(c, {1})) < o(Key(b, {1})));
    CHECK(std::abs(o(Key(dd, {2})) - o(Key(dd, {3}))) == 1);
  }
}

TEST_CASE("order: deep bases win over dependents") {
  //         a
  //       / | \ .
  //      b  c |
  //     / \ | /
  //    e    d          b before c
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    Dsk d;
    d.task(a, {b, c, dd});
    d.task(b, {dd, e});
    d.task(c, {dd});
    d.task(dd);
    d.task(e);
    Ordered o(d.g);
    CHECK(o(b) < o(c));
  }
}

TEST_CASE("order: prefers deep chains") {
  //     c
  //     |
  // e   b
  // |   |
  // d   a           start with the longer chain
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    Dsk d;
    d.data(a);
    d.task(b, {a});
    d.task(c, {b});
    d.data(dd);
    d.task(e, {dd});
    Ordered o(d.g);
    CHECK(o(a) < o(dd));
    CHECK(o(b) < o(dd));
  }
}

TEST_CASE("order: a 10000-long chain needs no deep recursion") {
  Dsk d;
  d.task(Key("x", {0}));
  for (int i = 1; i <= 10000; ++i) d.task(Key("x", {i}), {Key("x", {i - 1})});
  Ordered o(d.g);
  CHECK(o(Key("x", {10000})) == 10000);
}

TEST_CASE("order: ties are broken by key") {
  // ("x", i) for i < 10, all read by y: the x's run in reverse key order
  Dsk d;
  std::vector<Key> xs;
  for (int i = 0; i < 10; ++i) {
    xs.emplace_back("x", std::initializer_list<int64_t>{i});
    d.task(xs.back());
  }
  d.task("y", xs);
  Ordered o(d.g);
  CHECK(o("y") == 10);
  for (int i = 0; i < 10; ++i) CHECK(o(xs[static_cast<size_t>(i)]) == 9 - i);
}

TEST_CASE("order: mixed key types are fine") {
  Dsk d;
  d.task("x");
  d.task(Key("y", {0}));
  d.task("z", {"x", Key("y", {0})});
  Ordered o(d.g);
  CHECK(o("z") == 2);
}

TEST_CASE("order: favours the longest critical path") {
  //    a
  //    |
  // d  b  e
  //  \ | /
  //    c
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    Dsk d;
    d.task(c);
    d.task(dd, {c});
    d.task(e, {c});
    d.task(b, {c});
    d.task(a, {b});
    Ordered o(d.g);
    CHECK(o(dd) > o(b));
    CHECK(o(e) > o(b));
  }
}

TEST_CASE("order: runs smaller sections first (pressure at most dask's 3)") {
  //         aa
  //        / |
  //   b   d  bb dd
  //  / \ /|  | /
  // a   c e  cc
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    Dsk d;
    for (const std::string& k : {a, c, e, c + c}) d.task(k);
    d.task(b, {a, c});
    d.task(dd, {c, e});
    d.task(b + b, {c + c});
    d.task(a + a, {dd, b + b});
    d.task(dd + dd, {c + c});
    Ordered o(d.g);
    // dask asserts 3; running dd before bb holds only two results.
    CHECK(o.pressure() <= 3);
  }
}

TEST_CASE("order: finishes local parents of a reduction first") {
  //         c1
  //         |
  //     b1  c2
  //     |  /|
  // a1  b2  c3
  // |  /|
  // a2  b3
  // |
  // a3          expected run: a3 a2 a1 b3 b2 b1 c3 c2 c1
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]);
    Dsk d;
    d.task(a + "3");
    d.task(a + "2", {a + "3"});
    d.task(a + "1", {a + "2"});
    d.task(b + "3");
    d.task(b + "2", {b + "3", a + "2"});
    d.task(b + "1", {b + "2"});
    d.task(c + "3");
    d.task(c + "2", {c + "3", b + "2"});
    d.task(c + "1", {c + "2"});
    Ordered o(d.g);
    const std::vector<std::string> expected{a + "3", a + "2", a + "1", b + "3", b + "2",
                                            b + "1", c + "3", c + "2", c + "1"};
    for (size_t i = 0; i < expected.size(); ++i) CHECK(o(expected[i]) == static_cast<int64_t>(i));
  }
}

TEST_CASE("order: nearest neighbours finish a local group first") {
  // a1  a2  a3  a4  a5  a6  a7 a8  a9
  //  \  |  /  \ |  /  \ |  / \ |  /
  //     b1      b2      b3     b4
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]);
    Dsk d;
    for (int i = 1; i <= 4; ++i) d.task(b + std::to_string(i));
    auto B = [&](int i) { return Key(b + std::to_string(i)); };
    const std::vector<std::vector<int>> reads{{1}, {1}, {1, 2}, {2}, {2, 3}, {3}, {3, 4}, {4}, {4}};
    for (int i = 1; i <= 9; ++i) {
      std::vector<Key> deps;
      for (int j : reads[static_cast<size_t>(i - 1)]) deps.push_back(B(j));
      d.task(a + std::to_string(i), deps);
    }
    Ordered o(d.g);
    const double half = 13 / 2.0;
    int as = 0, bs = 0;
    for (int i = 1; i <= 9; ++i) as += o(a + std::to_string(i)) < half;
    for (int i = 1; i <= 4; ++i) bs += o(B(i)) < half;
    CHECK(3 < as);
    CHECK(as < 7);
    CHECK(1 < bs);
    CHECK(bs < 4);
  }
}

TEST_CASE("order: independent tasks run in key order (either direction)") {
  Dsk d;
  for (int i = 1; i <= 3; ++i) d.task(Key("a", {i}));
  Ordered o(d.g);
  const bool up = o(Key("a", {1})) == 0 && o(Key("a", {2})) == 1 && o(Key("a", {3})) == 2;
  const bool down = o(Key("a", {1})) == 2 && o(Key("a", {2})) == 1 && o(Key("a", {3})) == 0;
  CHECK((up || down));
}

TEST_CASE("order: prefers short narrow branches") {
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]);
    Dsk d;
    d.data(Key(a, {0}));
    d.data(Key(b, {0}));
    d.data(Key(c, {0}));
    d.task(Key(c, {1}), {Key(c, {0}), Key(a, {0}), Key(b, {0})});
    d.data(Key(a, {1}));
    d.data(Key(b, {1}));
    d.task(Key(c, {2}), {Key(c, {1}), Key(a, {1}), Key(b, {1})});
    Ordered o(d.g);
    CHECK(o(Key(b, {0})) < o(Key(b, {1})));
    CHECK(o(Key(b, {0})) < o(Key(c, {2})));
    CHECK(o(Key(c, {1})) < o(Key(c, {2})));
  }
}

TEST_CASE("order: prefers a short ancestor") {
  //                 c2
  //                / \ \ .
  //              c1   \ \ .
  //            / | \   \ \ .
  //          c0  a0 b0  a1 b1
  //               \ \   / /
  //                  ab
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]);
    Dsk d;
    d.data(a + b);
    d.task(Key(a, {0}), {a + b});
    d.task(Key(b, {0}), {a + b});
    d.data(Key(c, {0}));
    d.task(Key(c, {1}), {Key(c, {0}), Key(a, {0}), Key(b, {0})});
    d.task(Key(a, {1}), {a + b});
    d.task(Key(b, {1}), {a + b});
    d.task(Key(c, {2}), {Key(c, {1}), Key(a, {1}), Key(b, {1})});
    Ordered o(d.g);
    CHECK(o(Key(a, {0})) < o(Key(a, {1})));
    CHECK(o(Key(b, {0})) < o(Key(b, {1})));
    CHECK(o(Key(b, {0})) < o(Key(c, {2})));
    CHECK(o(Key(c, {1})) < o(Key(c, {2})));
    CHECK(o(Key(c, {1})) < o(Key(a, {1})));
  }
}

TEST_CASE("order: map_overlap finishes one side before starting the other") {
  //   b1      b3      b5
  //    |\    / | \  / |
  //   c1  c2  c3  c4  c5
  //    |/  | \ | / | \|
  //   d1  d2  d3  d4  d5
  //    |       |      |
  //   e1      e3      e5
  for (const std::string& n : name_orders()) {
    const std::string b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    auto K = [](const std::string& x, int i) { return Key(x, {i}); };
    Dsk d;
    d.task(K(e, 1));
    d.task(K(dd, 1), {K(e, 1)});
    d.task(K(c, 1), {K(dd, 1)});
    d.task(K(b, 1), {K(c, 1), K(c, 2)});
    d.task(K(dd, 2));
    d.task(K(c, 2), {K(dd, 1), K(dd, 2), K(dd, 3)});
    d.task(K(e, 3));
    d.task(K(dd, 3), {K(e, 3)});
    d.task(K(c, 3), {K(dd, 3)});
    d.task(K(b, 3), {K(c, 2), K(c, 3), K(c, 4)});
    d.task(K(dd, 4));
    d.task(K(c, 4), {K(dd, 3), K(dd, 4), K(dd, 5)});
    d.task(K(e, 5));
    d.task(K(dd, 5), {K(e, 5)});
    d.task(K(c, 5), {K(dd, 5)});
    d.task(K(b, 5), {K(c, 4), K(c, 5)});
    Ordered o(d.g);
    CHECK((o(K(b, 1)) < o(K(e, 5)) || o(K(b, 5)) < o(K(e, 1))));
  }
}

TEST_CASE("order: uses structure, not key names (pressure 3)") {
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]);
    auto A = [&](int i) { return Key(a, {i}); };
    Dsk d;
    for (int i = 0; i < 10; ++i) d.task(A(i));
    const std::vector<std::pair<int, std::vector<int>>> bs{
        {5, {2}},       {7, {0, 2}},    {9, {7, 0, 2}}, {1, {4, 7, 0}}, {2, {9, 4, 7}},
        {4, {6, 9, 4}}, {3, {5, 6, 9}}, {8, {1, 5, 6}}, {6, {8, 1, 5}}, {0, {3, 8, 1}}};
    for (const auto& [i, reads] : bs) {
      std::vector<Key> deps;
      for (int j : reads) deps.push_back(A(j));
      d.task(Key(b, {i}), deps);
    }
    Ordered o(d.g);
    CHECK(o.pressure() == 3);
  }
}

TEST_CASE("order: does not run all dependents too early") {
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]);
    auto K = [](const std::string& x, int i) { return Key(x, {i}); };
    Dsk d;
    d.task(K(a, 0));
    d.task(K(b, 0));
    d.task(K(c, 0));
    d.task(K(dd, 0), {K(a, 0), K(b, 0), K(c, 0)});
    for (int i = 1; i < 10; ++i) {
      d.task(K(b, i), {K(b, 0)});
      d.task(K(c, i), {K(c, 0)});
      d.task(K(dd, i), {K(dd, i - 1), K(b, i), K(c, i)});
    }
    Ordered o(d.g);
    for (int i = 0; i < 10; ++i) CHECK(o(K(dd, i)) == 3 * i + 3);
  }
}

TEST_CASE("order: refuses cycles, naming them") {
  Dsk self;
  self.task("a", {"a"});
  REQUIRE_THROWS_WITH_AS(order(self.g), "cycle in graph: a -> a", CycleError);
  Dsk loop;
  loop.task("a", {"b"});
  loop.task("b", {"c"});
  loop.task("c", {"a", "d"});
  loop.data("d");
  REQUIRE_THROWS_WITH_AS(order(loop.g), "cycle in graph: a -> b -> c -> a", CycleError);
  Dsk missing;
  missing.task("a", {"zz"});
  REQUIRE_THROWS_WITH_AS(order(missing.g), "missing key zz: task a depends on it, but the graph has no such key",
                         MissingKeyError);
}

TEST_CASE("order: an empty graph has an empty order") { CHECK(order(Graph()).empty()); }

TEST_CASE("order: a terminal node does not make it backtrack to the other half") {
  //                  s
  //          /   /       \   \ .
  //        s00  s10       s01  s11
  //         |    |         |    |
  //        b0   b1        b2   b3
  //        / \  / \       / \ / \ .
  //       a0  a1  a2    a3  a4  a5
  Dsk d;
  for (int i = 0; i < 6; ++i) d.data(Key("a", {i}));
  d.task(Key("b", {0}), {Key("a", {0}), Key("a", {1})});
  d.task(Key("b", {1}), {Key("a", {1}), Key("a", {2})});
  d.task(Key("b", {2}), {Key("a", {3}), Key("a", {4})});
  d.task(Key("b", {3}), {Key("a", {4}), Key("a", {5})});
  d.g.alias(Key("store", {0, 0}), Key("b", {0}));
  d.g.alias(Key("store", {1, 0}), Key("b", {1}));
  d.g.alias(Key("store", {0, 1}), Key("b", {2}));
  d.g.alias(Key("store", {1, 1}), Key("b", {3}));
  d.task("store", {Key("store", {0, 0}), Key("store", {1, 0}), Key("store", {0, 1}), Key("store", {1, 1})});
  Ordered o(d.g);
  CHECK(o(Key("a", {2})) < o(Key("a", {3})));
}

TEST_CASE("order: many branches, the ones with more work first") {
  //                         a3
  //        /      |     |      \         \ .
  //      a2      b2    c1      dd3        ee3
  //      |       |     |      /   \      /   \ .
  //      a1      b1    |    d2    dd2   e2    ee2
  //       \       \    |    |      |    |      |
  //        \       \   |    d1    dd1   e1    ee1
  //         `-------`--a0--'------'-----'------'
  for (const std::string& n : name_orders()) {
    const std::string a = s(n[0]), b = s(n[1]), c = s(n[2]), dd = s(n[3]), e = s(n[4]);
    const std::string d2 = dd + dd, e2 = e + e;
    auto K = [](const std::string& x, int i) { return Key(x, {i}); };
    Dsk d;
    d.data(K(a, 0));
    d.task(K(a, 1), {K(a, 0)});
    d.task(K(a, 2), {K(a, 1)});
    d.task(K(b, 1), {K(a, 0)});
    d.task(K(b, 2), {K(b, 1)});
    d.task(K(c, 1), {K(a, 0)});
    d.task(K(dd, 1), {K(a, 0)});
    d.task(K(dd, 2), {K(dd, 1)});
    d.task(K(d2, 1), {K(a, 0)});
    d.task(K(d2, 2), {K(d2, 1)});
    d.task(K(d2, 3), {K(dd, 2), K(d2, 2)});
    d.task(K(e, 1), {K(a, 0)});
    d.task(K(e, 2), {K(e, 1)});
    d.task(K(e2, 1), {K(a, 0)});
    d.task(K(e2, 2), {K(e2, 1)});
    d.task(K(e2, 3), {K(e, 2), K(e2, 2)});
    d.task(K(a, 3), {K(a, 2), K(b, 2), K(c, 1), K(d2, 3), K(e2, 3)});
    Ordered o(d.g);
    std::vector<int64_t> des;
    for (const std::string& x : {dd, d2, e, e2}) {
      for (int i = 1; i <= 3; ++i) {
        if (d.g.contains(K(x, i))) des.push_back(o(K(x, i)));
      }
    }
    std::sort(des.begin(), des.end());
    CHECK(des == std::vector<int64_t>{1, 2, 3, 4, 5, 6, 7, 8, 9, 10});
    CHECK(o(K(c, 1)) == o(K(a, 3)) - 1);
  }
}

TEST_CASE("order: equal dependents stay together and pressure stays low") {
  // Four groups x; each crosses with every group y (x3_i reads x2_0 and y2_1),
  // then fans out in pairs: x5_i_0, x5_i_1 -> x6_i_0, x6_i_1.
  for (const std::string& n : name_orders()) {
    const std::vector<std::string> abc{s(n[0]), s(n[1]), s(n[2]), s(n[3])};
    auto K = [](const std::string& x, std::initializer_list<int64_t> i) { return Key(x, i); };
    Dsk d;
    for (const std::string& x : abc) {
      d.task(K(x, {0}));
      d.task(K(x, {1}), {K(x, {0})});
      d.task(K(x, {2, 0}), {K(x, {0})});
      d.task(K(x, {2, 1}), {K(x, {1})});
    }
    for (const std::string& x : abc) {
      for (int64_t i = 0; i < 4; ++i) {
        d.task(K(x, {3, i}), {K(x, {2, 0}), K(abc[static_cast<size_t>(i)], {2, 1})});
        d.task(K(x, {4, i}), {K(x, {3, i})});
        d.task(K(x, {5, i, 0}), {K(x, {4, i})});
        d.task(K(x, {5, i, 1}), {K(x, {4, i})});
        d.task(K(x, {6, i, 0}), {K(x, {5, i, 0})});
        d.task(K(x, {6, i, 1}), {K(x, {5, i, 1})});
      }
    }
    Ordered o(d.g);
    int64_t total = 0;
    for (const std::string& x : abc) {
      for (int64_t i = 0; i < 4; ++i) total += std::abs(o(K(x, {6, i, 1})) - o(K(x, {6, i, 0})));
    }
    CHECK(total <= 32);
    CHECK(o.pressure() <= 10);
  }
}

TEST_CASE("order_pressure and sync_pressure refuse priorities of the wrong size") {
  Dsk d;
  d.task("a");
  d.task("b", {"a"});
  const CompiledGraph c = compile(d.g);
  const std::vector<uint32_t> one{0};
  REQUIRE_THROWS_WITH_AS(order_pressure(c, one), "order_pressure: expected one priority per node (2), found 1",
                         ValueError);
  REQUIRE_THROWS_WITH_AS(sync_pressure(d.g, c, one), "sync_pressure: expected one priority per node (2), found 1",
                         ValueError);
  REQUIRE_THROWS_WITH_AS(order_pressure(c, std::vector<uint32_t>{0, 5}),
                         "order_pressure: priorities are not a permutation", ValueError);
  CHECK(order_pressure(c, std::vector<uint32_t>{0, 1}) == 1);
  CHECK(sync_pressure(d.g, c, std::vector<uint32_t>{0, 1}) == 1);  // a is dropped once b ran
  CHECK(sync_pressure(d.g, c, std::vector<uint32_t>{0, 1}, std::vector<Key>{"a", "b"}) == 2);  // unless requested
}
