// Comparisons, where, isnan, any, all, argmax/argmin and the nan-reductions against numpy.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/logic.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

TEST_CASE("comparisons, where and isnan with broadcasting and NaNs equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(71);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    NDArray bdata;
    auto [c, x0] = prepare(dir, rng, round % 4 == 3, &bdata);
    const std::string about = case_text(c);
    INFO(about);
    const NDArray a = with_nans(npy::open(dir / "a.npy"), rng);
    npy::save(dir / "a.npy", a);
    // b: the last axes of a's shape, cut at random, so comparisons broadcast.
    const size_t drop = rng() % c.shape.size();
    const Shape bshape(c.shape.begin() + static_cast<long>(drop), c.shape.end());
    NDArray b = with_nans(testing::random_block(c.dtype, bshape, rng), rng);
    npy::save(dir / "b.npy", b);
    std::vector<std::vector<int64_t>> sizes;
    for (int64_t n : bshape) sizes.push_back(random_sizes(n, rng));
    const Array x = from_ndarray(a, c.chunks), y = from_ndarray(b, Chunks(sizes));
    check_all(dir, {
                       {"eq", "a == b", equal(x, y)},
                       {"ne", "a != b", not_equal(x, y)},
                       {"lt", "a < b", x < y},
                       {"le", "a <= b", x <= y},
                       {"gt", "a > b", x > y},
                       {"ge", "a >= b", x >= y},
                       {"gs", "a > 1", x > 1},
                       {"w", "np.where(a > b, a, b)", where(x > y, x, y)},
                       // A bool zero, as tessera's: numpy's python 0 would make a bool `a` int64.
                       {"wc", "np.where(b, a, np.zeros(1, bool))", where(y, x, zeros({1}, 1, DType::bool_()))},
                       {"nan", "np.isnan(a)", isnan(x)},
                   });
  }
}

TEST_CASE("any, all, nansum, nanmean, nanmax and nanmin over random axes equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(73);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    auto [c, x0] = prepare(dir, rng, round % 4 == 3);
    const std::string about = case_text(c);
    INFO(about);
    const NDArray a = with_nans(npy::open(dir / "a.npy"), rng);
    npy::save(dir / "a.npy", a);
    const Array x = from_ndarray(a, c.chunks);
    std::vector<Expected> items;
    for (int j = 0; j < 4; ++j) {
      ReduceOptions o;
      std::vector<std::string> axes;
      for (size_t k = 0; k < c.shape.size(); ++k) {
        if (rng() % 2) {
          o.axis.push_back(static_cast<int>(k));
          axes.push_back(std::to_string(k));
        }
      }
      o.keepdims = rng() % 2;
      const std::string args = absl::StrCat("a, axis=", o.axis.empty() ? std::string("None") : absl::StrCat("(", absl::StrJoin(axes, ","), ",)"),
                                            ", keepdims=", o.keepdims ? "True" : "False");
      items.push_back({absl::StrCat("any", j), absl::StrCat("np.any(", args, ")"), any(x, o)});
      items.push_back({absl::StrCat("all", j), absl::StrCat("np.all(", args, ")"), all(x, o)});
      items.push_back({absl::StrCat("ns", j), absl::StrCat("np.nansum(", args, ")"), nansum(x, o)});
      if (x.size() > 0) {  // numpy's nanmax and nanmin raise on an empty reduction, as max and min do
        items.push_back({absl::StrCat("nx", j), absl::StrCat("np.nanmax(", args, ")"), nanmax(x, o)});
        items.push_back({absl::StrCat("nn", j), absl::StrCat("np.nanmin(", args, ")"), nanmin(x, o)});
      }
      if (c.dtype.is_floating() || c.dtype.is_complex()) {
        items.push_back({absl::StrCat("nm", j),
                         absl::StrCat("np.nanmean(", args, ").astype(np.", c.dtype.name(), ")"), nanmean(x, o)});
      }
    }
    check_all(dir, items);
  }
}

TEST_CASE("comparison and where errors name the shapes") {
  const Array x = zeros({5, 6}, {2, 3});
  REQUIRE_THROWS_WITH_AS(less(x, zeros({5}, 5)), "less: operands could not be broadcast together with shapes (5, 6) (5,)",
                         tessera::ChunkError);
  REQUIRE_THROWS_WITH_AS(where(zeros({4, 1}, 1, DType::bool_()), x, x),
                         "where: operands could not be broadcast together with shapes (4, 1) (5, 6) (5, 6)",
                         tessera::ChunkError);
}

TEST_CASE("argmax and argmin along each axis, with ties and NaNs, equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(79);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    auto [c, x0] = prepare(dir, rng, false);
    const std::string about = case_text(c);
    INFO(about);
    const NDArray a = with_nans(npy::open(dir / "a.npy"), rng);
    npy::save(dir / "a.npy", a);
    const Array x = from_ndarray(a, c.chunks);
    const Array y = from_npy(dir / "b.npy", c.chunks);
    std::vector<Expected> items;
    const int nd = static_cast<int>(c.shape.size());
    for (int axis = -nd; axis < nd; ++axis) {
      const int split = 2 + static_cast<int>(rng() % 3);
      items.push_back({absl::StrCat("mx", axis + nd), absl::StrCat("np.argmax(a, axis=", axis, ")"),
                       argmax(x, {.axis = {axis}, .split_every = split})});
      items.push_back({absl::StrCat("mn", axis + nd), absl::StrCat("np.argmin(a, axis=", axis, ")"),
                       argmin(x, {.axis = {axis}, .split_every = split})});
      // b has no NaN: blocks along the last axis take Eigen's arg reduction (with NaNs, the loop).
      items.push_back({absl::StrCat("bmx", axis + nd), absl::StrCat("np.argmax(b, axis=", axis, ")"),
                       argmax(y, {.axis = {axis}, .split_every = split})});
      items.push_back({absl::StrCat("bmn", axis + nd), absl::StrCat("np.argmin(b, axis=", axis, ")"),
                       argmin(y, {.axis = {axis}, .split_every = split})});
      if (!c.dtype.is_complex()) {  // max and min propagate NaN, along the last axis too
        items.push_back({absl::StrCat("max", axis + nd), absl::StrCat("np.max(a, axis=", axis, ")"),
                         max(x, {.axis = {axis}})});
        items.push_back({absl::StrCat("min", axis + nd), absl::StrCat("np.min(a, axis=", axis, ")"),
                         min(x, {.axis = {axis}})});
      }
    }
    items.push_back({"fmx", "np.argmax(a)", argmax(x)});  // of the flattened array
    items.push_back({"fmn", "np.argmin(a)", argmin(x)});
    check_all(dir, items);
  }
}

TEST_CASE("argmax errors name the axis") {
  REQUIRE_THROWS_WITH_AS(argmax(zeros({3, 4}, 2), {.axis = {2}}),
                         "argmax: axis 2 is out of bounds for an array of 2 dimension(s)", tessera::Error);
  REQUIRE_THROWS_WITH_AS(argmin(zeros({3, 0}, 2), {.axis = {1}}), "argmin: axis 1 has no elements (shape (3, 0))",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(argmax(zeros({3}, 2), {.axis = {0}, .split_every = 1}),
                         "argmax: split_every must be at least 2, found 1", tessera::Error);
  REQUIRE_THROWS_WITH_AS(argmin(zeros({3, 4}, 2), {.axis = {0, 1}}), "argmin: expected at most one axis, found 2",
                         tessera::Error);
}

TEST_CASE("argmax and argmin keep the reduced axes with extent 1 under keepdims, as numpy's") {
  // rows: 0 1 2 7 | 7 5 6 1
  const Array x = from_ndarray(NDArray::from_vector<int32_t>({0, 1, 2, 7, 7, 5, 6, 1}, {2, 4}), Chunks({{2}, {3, 1}}));
  const Array rows = argmax(x, {.axis = {1}, .keepdims = true});
  REQUIRE(rows.shape() == Shape{2, 1});
  const NDArray r = rows.compute();
  CHECK(r.at<int64_t>({0, 0}) == 3);
  CHECK(r.at<int64_t>({1, 0}) == 0);
  const Array cols = argmin(x, {.axis = {-2}, .keepdims = true});
  REQUIRE(cols.shape() == Shape{1, 4});
  CHECK(cols.compute().at<int64_t>({0, 3}) == 1);
  const Array flat = argmin(x, {.axis = {}, .keepdims = true});
  REQUIRE(flat.shape() == Shape{1, 1});
  CHECK(flat.compute().at<int64_t>({0, 0}) == 0);
}

TEST_CASE("argmax of the flattened array: ties across blocks keep the first position; no elements is an error") {
  // 7 is in block (0, 0) at flat 4 and in block (0, 1) at flat 3: the blocks'
  // order is not the flattened order, the positions decide.
  const Array x = from_ndarray(NDArray::from_vector<int32_t>({0, 1, 2, 7, 7, 5, 6, 1}, {2, 4}), Chunks({{2}, {3, 1}}));
  CHECK(argmax(x).compute().at<int64_t>({}) == 3);
  CHECK(argmin(x).compute().at<int64_t>({}) == 0);
  CHECK(argmax(x).ndim() == 0);
  REQUIRE_THROWS_WITH_AS(argmax(zeros({3, 0}, 2)), "argmax: the array has no elements (shape (3, 0))",
                         tessera::Error);
}

TEST_CASE("a comparison with a scalar runs in the array's dtype when that holds the value, as numpy's") {
  // float32(0.1) is not 0.1: compared as float32 (numpy's choice) they are equal;
  // in float64 the element would be greater.
  const Array x = from_ndarray(NDArray::full(DType::float32(), {3}, Scalar(0.1)));
  CHECK(all(equal(x, Scalar(0.1))).compute<bool>());
  CHECK_FALSE(any(greater(x, Scalar(0.1))).compute<bool>());
  // Values the array's dtype cannot hold promote instead of wrapping or overflowing.
  const Array i = from_ndarray(NDArray::full(DType::int8(), {3}, Scalar(5)));
  CHECK_FALSE(any(greater(i, Scalar(1000))).compute<bool>());  // 1000 would wrap to -24 in int8
  CHECK(all(greater(i, Scalar(-1000))).compute<bool>());
  const Array u = from_ndarray(NDArray::full(DType::uint8(), {3}, Scalar(0)));
  CHECK(all(greater(u, Scalar(-1))).compute<bool>());  // -1 would wrap to 255 in uint8
  const Array inf = from_ndarray(NDArray::full(DType::float32(), {3}, Scalar(std::numeric_limits<double>::infinity())));
  CHECK(all(greater(inf, Scalar(1e300))).compute<bool>());  // 1e300 would be inf in float32
  // The same for float16: 0.1 compares equal to float16's 0.1; 1e5 is past its largest (65504).
  const Array h = from_ndarray(NDArray::full(DType::float16(), {3}, Scalar(0.1)));
  CHECK(all(equal(h, Scalar(0.1))).compute<bool>());
  const Array hinf = from_ndarray(NDArray::full(DType::float16(), {3}, Scalar(std::numeric_limits<double>::infinity())));
  CHECK(all(greater(hinf, Scalar(1e5))).compute<bool>());
}

TEST_CASE("nanmean of float16 over more elements than float16 counts (65504) is the mean, not 0, as numpy's") {
  const Array x = full({70000}, 0.5, 30000, DType::float16());
  const Array m = nanmean(x);
  CHECK(m.dtype() == DType::float16());
  CHECK(m.compute<double>() == 0.5);
  CHECK(mean(x).compute<double>() == 0.5);
  // numpy's nanmean sums in float16, which overflows here; its mean sums wider.
  const Array ones_ = ones({70000}, 30000, DType::float16());
  CHECK(std::isinf(nanmean(ones_).compute<double>()));
  CHECK(mean(ones_).compute<double>() == 1.0);
}
