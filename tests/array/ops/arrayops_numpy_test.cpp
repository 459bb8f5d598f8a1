// The lazy Array against numpy: random shapes, chunkings and dtypes; every
// expression is computed by tessera and by numpy ($TESSERA_PYTHON) on the same
// .npy files, and the results must agree.
#include <doctest/doctest.h>

#include <limits>
#include <random>
#include <type_traits>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/broadcast.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/array/ops/logic.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/scan.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/ops/slicing.hpp"
#include "python_peer.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

TEST_CASE("element-wise + - * / between arrays and with scalars equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(20261130);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    NDArray b;
    auto [c, x] = prepare(dir, rng, round % 4 == 3, &b);
    const std::string about = case_text(c);
    INFO(about);
    Array y = from_ndarray(b, c.chunks);
    std::vector<Expected> items = {
        {"add", "a + b", x + y},
        {"mul", "a * b", x * y},
        {"div", "a / b", x / y},
        {"add_s", "a + 3", x + 3},
        {"mul_s", "a * 2.5", x * 2.5},
        {"sdiv", "2 / b", 2 / y},
        {"f32", "a.astype(np.float32)", astype(x, DType::float32())},
    };
    if (c.dtype != DType::bool_()) {
      items.push_back({"sub", "a - b", x - y});
      items.push_back({"ssub", "7 - a", 7 - x});
    }
    check_all(dir, items);
  }
}

TEST_CASE("sum, mean, min, max, var and std over random axes equal numpy's" *
          python_peer::needed()) {
  std::mt19937_64 rng(7);
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, round % 5 == 4);
    const std::string about = case_text(c);
    INFO(about);
    std::vector<Expected> items;
    const char* ops[] = {"sum", "mean", "min", "max", "var", "std"};
    for (int j = 0; j < 12; ++j) {
      ReduceOptions o;
      std::vector<std::string> axes;
      bool empty_reduced = false;
      for (size_t k = 0; k < c.shape.size(); ++k) {
        if (rng() % 2) {
          // Negative axes count from the end.
          int axis = rng() % 2 ? static_cast<int>(k) : static_cast<int>(k) - static_cast<int>(c.shape.size());
          o.axis.push_back(axis);
          axes.push_back(std::to_string(axis));
          empty_reduced = empty_reduced || c.shape[k] == 0;
        }
      }
      o.keepdims = rng() % 2;
      o.split_every = 2 + static_cast<int>(rng() % 3);
      o.ddof = static_cast<int>(rng() % 2);
      const std::string op = ops[rng() % std::size(ops)];
      int64_t size = 1;
      for (int64_t s : c.shape) size *= s;
      if ((op == "min" || op == "max") && (empty_reduced || size == 0)) continue;  // numpy raises; tested apart
      std::string args = absl::StrCat("a, axis=", o.axis.empty() ? std::string("None") : absl::StrCat("(", absl::StrJoin(axes, ","), ",)"),
                                      ", keepdims=", o.keepdims ? "True" : "False");
      Array r = op == "sum"    ? sum(x, o)
                : op == "mean" ? mean(x, o)
                : op == "min"  ? min(x, o)
                : op == "max"  ? max(x, o)
                : op == "var"  ? var(x, o)
                               : tessera::array::std(x, o);
      if (op == "var" || op == "std") absl::StrAppend(&args, ", ddof=", o.ddof);
      items.push_back({absl::StrCat("r", j), absl::StrCat("np.", op, "(", args, ")"), r});
    }
    check_all(dir, items);
  }
}

TEST_CASE("slicing with steps, negative steps and indices equals numpy's" *
          python_peer::needed()) {
  std::mt19937_64 rng(99);
  for (int round = 0; round < 6; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, false);
    const std::string about = case_text(c);
    INFO(about);
    std::vector<Expected> items;
    for (int j = 0; j < 8; ++j) {
      std::vector<Slice> slices;
      std::vector<std::string> text;
      for (size_t k = 0; k < c.shape.size(); ++k) {
        const int64_t n = c.shape[k];
        auto pos = [&] { return std::uniform_int_distribution<int64_t>(-n - 2, n + 2)(rng); };
        if (rng() % 6 == 0) {
          int64_t i = std::uniform_int_distribution<int64_t>(-n, n - 1)(rng);
          slices.push_back(Slice::index(i));
          text.push_back(std::to_string(i));
          continue;
        }
        Slice s;
        if (rng() % 3) s.start = pos();
        if (rng() % 3) s.stop = pos();
        s.step = std::uniform_int_distribution<int64_t>(1, 3)(rng) * (rng() % 3 == 0 ? -1 : 1);
        auto opt = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string(); };
        slices.push_back(s);
        text.push_back(absl::StrCat(opt(s.start), ":", opt(s.stop), ":", s.step));
      }
      items.push_back({absl::StrCat("s", j), absl::StrCat("a[", absl::StrJoin(text, ","), "]"), slice(x, slices)});
    }
    check_all(dir, items);
  }
}

TEST_CASE("an expression over several layers equals numpy's" * python_peer::needed()) {
  TempDir dir;
  std::mt19937_64 rng(5);
  NDArray a = random_block(DType::float64(), {37, 23}, rng), b = random_block(DType::float64(), {37, 23}, rng);
  npy::save(dir / "a.npy", a);
  npy::save(dir / "b.npy", b);
  Array x = from_npy(dir / "a.npy", {10, -1}), y = from_npy(dir / "b.npy", {10, -1});
  Array z = (x + y) / 2.0 - (x - y) * 0.0;
  Array col = sum(slice(z, {Slice{1, std::nullopt, 2}}), {.axis = {0}, .split_every = 3});
  check_all(dir, {{"z", "(a + b) / 2.0", z}, {"col", "((a + b) / 2.0)[1::2].sum(axis=0)", col}});
  // The same data cut differently sums alike.
  CHECK(sum(x).compute<double>() == doctest::Approx(sum(from_ndarray(a, 7)).compute<double>()));
}

TEST_CASE("element-wise ops between arrays of other chunks and broadcast shapes equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(41);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, round % 4 == 3);
    const std::string about = case_text(c);
    INFO(about);
    // b: a's shape with leading axes dropped and some axes set to 1, cut at random.
    Shape bshape(c.shape.begin() + static_cast<long>(rng() % c.shape.size()), c.shape.end());
    for (int64_t& e : bshape) {
      if (rng() % 2) e = 1;
    }
    std::vector<std::vector<int64_t>> sizes;
    for (int64_t n : bshape) sizes.push_back(testing::random_sizes(n, rng));
    const NDArray b = random_block(c.dtype, bshape, rng, /*nonzero=*/true);
    npy::save(dir / "b.npy", b);
    const Array y = from_ndarray(b, Chunks(sizes));
    std::vector<std::vector<int64_t>> other;
    for (int64_t n : c.shape) other.push_back(testing::random_sizes(n, rng));
    const Array x2 = from_ndarray(npy::open(dir / "a.npy"), Chunks(other));
    std::vector<Expected> items = {
        {"add", "a + b", x + y},
        {"radd", "b + a", y + x},
        {"mul", "a * b", x * y},
        {"chunks", "a * a", x * x2},
        {"bb", "b * b", y * y},
    };
    if (c.dtype != DType::bool_()) items.push_back({"sub", "a - b", x - y});
    check_all(dir, items);
  }
}

TEST_CASE("broadcast_to and unify_chunks" * python_peer::needed()) {
  TempDir dir;
  std::mt19937_64 rng(43);
  const NDArray a = random_block(DType::int32(), {1, 5}, rng);
  npy::save(dir / "a.npy", a);
  npy::save(dir / "b.npy", a);
  const Array x = from_ndarray(a, {1, 2});
  check_all(dir, {{"bt", "np.broadcast_to(a, (3, 4, 5))", broadcast_to(x, {3, 4, 5})}});
  const std::vector<Array> u = unify_chunks({zeros({4, 5}, {2, 3}), x, zeros({5}, {4})});
  CHECK(u[0].chunks() == Chunks({{2, 2}, {2, 1, 1, 1}}));
  CHECK(u[1].chunks() == Chunks({{1}, {2, 1, 1, 1}}));
  CHECK(u[2].chunks() == Chunks({{1}, {2, 1, 1, 1}}));
  REQUIRE_THROWS_WITH_AS(broadcast_to(x, {5}), "operands could not be broadcast together with shapes (1, 5) (5,)",
                         tessera::ChunkError);
  REQUIRE_THROWS_WITH_AS(broadcast_to(x, {2, 6}), "operands could not be broadcast together with shapes (1, 5) (2, 6)",
                         tessera::ChunkError);
}

TEST_CASE("cumsum and cumprod along each axis equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(61);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, round % 4 == 3);
    const std::string about = case_text(c);
    INFO(about);
    std::vector<Expected> items;
    const int nd = static_cast<int>(c.shape.size());
    for (int axis = -nd; axis < nd; ++axis) {
      items.push_back({absl::StrCat("s", axis + nd), absl::StrCat("np.cumsum(a, axis=", axis, ")"), cumsum(x, axis)});
      items.push_back({absl::StrCat("p", axis + nd), absl::StrCat("np.cumprod(b, axis=", axis, ")"),
                       cumprod(from_npy(dir / "b.npy", c.chunks), axis)});
    }
    check_all(dir, items);
  }
}

// numpy's integer scans wrap modulo 2^64 (int8 and int32 are scanned as int64,
// unsigned ones as uint64): sums of values near 2^62 and products of a dozen
// hundreds overflow, across blocks too, so the carries wrap as well.
TEST_CASE("cumsum and cumprod of integers wrap on overflow as numpy's do" * python_peer::needed()) {
  for (DType dtype : {DType::int8(), DType::int32(), DType::int64(), DType::uint64()}) {
    TempDir dir;
    INFO(dtype.name());
    NDArray a = NDArray::empty(dtype, {3, 8});
    dispatch(dtype, [&]<class T>() {
      if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
        T* p = a.data<T>();
        for (int64_t i = 0; i < a.size(); ++i) {
          const T big = static_cast<T>(std::numeric_limits<T>::max() / 2 + 3 * i);
          const bool negative = std::is_signed_v<T> && i % 3 == 1;
          p[i] = negative ? static_cast<T>(-big) : big;
        }
      }
    });
    npy::save(dir / "a.npy", a);
    npy::save(dir / "b.npy", a);
    const Array x = from_npy(dir / "a.npy", Chunks({{2, 1}, {3, 5}}));
    std::vector<Expected> items;
    for (int axis = 0; axis < 2; ++axis) {
      items.push_back({absl::StrCat("s", axis), absl::StrCat("np.cumsum(a, axis=", axis, ")"), cumsum(x, axis)});
      items.push_back({absl::StrCat("p", axis), absl::StrCat("np.cumprod(a, axis=", axis, ")"), cumprod(x, axis)});
    }
    check_all(dir, items);
  }
}

TEST_CASE("cumsum errors name the axis") {
  REQUIRE_THROWS_WITH_AS(cumsum(zeros({3, 4}, 2), 2), "cumsum: axis 2 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(cumprod(zeros({}, 1), 0), "cumprod: needs an array of at least one dimension, found a 0-d array",
                         tessera::Error);
}

TEST_CASE("float16 arrays through every kind of op equal numpy's, result dtypes included" * python_peer::needed()) {
  // The random comparisons above draw float16 among the other dtypes; this case
  // draws only float16, so every op below meets it on odd shapes and chunks:
  // promotions with each other kind, reductions (numpy sums float16 in float32
  // and rounds once, tessera in float64), scans, NaN-aware reductions, shape ops,
  // conversions, matmul (float32 inside, float16 out) and fft (complex128, as numpy 1.x).
  std::mt19937_64 rng(1616);
  const DType half[] = {DType::float16()};
  for (int round = 0; round < 6; ++round) {
    TempDir dir;
    NDArray b;
    auto [c, x] = prepare(dir, rng, false, &b, half);
    const std::string about = case_text(c);
    INFO(about);
    const Array y = from_ndarray(b, c.chunks);
    npy::save(dir / "n.npy", with_nans(npy::open(dir / "a.npy"), rng));
    const Array xn = from_npy(dir / "n.npy", c.chunks);
    const int nd = static_cast<int>(c.shape.size());
    const int axis = static_cast<int>(rng() % nd);
    const ReduceOptions o{.axis = {axis}, .split_every = 2};
    const std::string ax = absl::StrCat("axis=", axis);
    std::vector<Expected> items = {
        {"add", "a + b", x + y},
        {"div", "a / b", x / y},
        {"sdiv", "2 / b", 2 / y},
        {"mul_s", "a * 2.5", x * 2.5},
        {"i8", "a + a.astype(np.int8)", x + astype(x, DType::int8())},
        {"i16", "a * a.astype(np.int16)", x * astype(x, DType::int16())},
        {"i32", "a - a.astype(np.int32)", x - astype(x, DType::int32())},
        {"f32", "a + b.astype(np.float32)", x + astype(y, DType::float32())},
        {"f64", "b.astype(np.float64) - a", astype(y, DType::float64()) - x},
        {"c64", "a * b.astype(np.complex64)", x * astype(y, DType::complex64())},
        {"cj", "a * 1j", x * Scalar(std::complex<double>(0, 1))},
        {"from64", "(a.astype(np.float64) * 1.7).astype(np.float16)", astype(astype(x, DType::float64()) * 1.7, DType::float16())},
        {"to_i", "b.astype(np.int16)", astype(y, DType::int16())},
        {"gt", "a > b", x > y},
        {"eq_s", "a == a[(0,) * a.ndim]", equal(x, Scalar(npy::open(dir / "a.npy").slice(std::vector<Slice>(nd, Slice::index(0))).copy().at<Eigen::half>({})))},
        {"where", "np.where(a > b, a, b)", where(x > y, x, y)},
        {"sum", "np.sum(a)", sum(x)},
        {"sum_ax", absl::StrCat("np.sum(a, ", ax, ")"), sum(x, o)},
        {"mean", "np.mean(a)", mean(x)},
        {"mean_ax", absl::StrCat("np.mean(a, ", ax, ")"), mean(x, o)},
        {"var", absl::StrCat("np.var(a, ", ax, ")"), var(x, o)},
        {"std", "np.std(a)", tessera::array::std(x)},
        {"min", absl::StrCat("np.min(a, ", ax, ")"), min(x, o)},
        {"max", "np.max(a)", max(x)},
        {"argmax", absl::StrCat("np.argmax(a, ", ax, ")"), argmax(x, {.axis = {axis}, .split_every = 2})},
        {"argmin", "np.argmin(a)", argmin(x)},
        {"any", absl::StrCat("np.any(a > 2, ", ax, ")"), any(x > 2, o)},
        {"all", "np.all(b)", all(y)},
        {"nansum", absl::StrCat("np.nansum(np.load('n.npy'), ", ax, ")"), nansum(xn, o)},
        {"nanmean", "np.nanmean(np.load('n.npy'))", nanmean(xn)},
        {"nanmax", absl::StrCat("np.nanmax(np.load('n.npy'), ", ax, ")"), nanmax(xn, o)},
        {"nanmin", "np.nanmin(np.load('n.npy'))", nanmin(xn)},
        {"isnan", "np.isnan(np.load('n.npy'))", isnan(xn)},
        {"cumsum", absl::StrCat("np.cumsum(a, ", ax, ")"), cumsum(x, axis)},
        {"cumprod", absl::StrCat("np.cumprod(b * 0.25, ", ax, ")"), cumprod(y * 0.25, axis)},
        {"concat", absl::StrCat("np.concatenate([a, b], ", ax, ")"), concatenate({x, y}, axis)},
        {"stack", "np.stack([a, b])", stack({x, y})},
        {"T", "a.T", transpose(x)},
        {"slice", "a[::-2]", slice(x, {Slice{std::nullopt, std::nullopt, -2}})},
        {"fft", "np.fft.fft(a)", fft(x)},
    };
    if (nd == 2) items.push_back({"matmul", "np.matmul(a, b.T)", matmul(x, transpose(y))});
    check_all(dir, items);
  }
}
