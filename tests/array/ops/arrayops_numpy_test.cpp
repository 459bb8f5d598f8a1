// The lazy Array against numpy: random shapes, chunkings and dtypes; every
// expression is computed by tessera and by numpy ($TESSERA_PYTHON) on the same
// .npy files, and the results must agree.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/slicing.hpp"
#include "python_peer.hpp"

using namespace tessera::array;
using tessera::array::testing::check_close;
using tessera::array::testing::random_block;
using tessera::array::testing::run_python_in;
using tessera::array::testing::TempDir;

namespace {

const DType kDTypes[] = {DType::bool_(),   DType::int8(),    DType::int32(),     DType::int64(),
                         DType::uint8(),   DType::uint16(),  DType::uint64(),    DType::float32(),
                         DType::float64(), DType::complex64(), DType::complex128()};

struct Case {
  DType dtype;
  Shape shape;
  Chunks chunks;
};

// Random sizes that add up to `n` (the single size 0 for an empty axis).
std::vector<int64_t> random_sizes(int64_t n, std::mt19937_64& rng) {
  if (n == 0) return {0};
  std::vector<int64_t> sizes;
  while (n > 0) {
    int64_t s = std::uniform_int_distribution<int64_t>(1, n)(rng);
    sizes.push_back(s);
    n -= s;
  }
  return sizes;
}

Case random_case(std::mt19937_64& rng, bool allow_empty) {
  Case c;
  c.dtype = kDTypes[rng() % std::size(kDTypes)];
  const size_t ndim = 1 + rng() % 3;
  std::vector<std::vector<int64_t>> sizes;
  for (size_t k = 0; k < ndim; ++k) {
    int64_t n = std::uniform_int_distribution<int64_t>(allow_empty ? 0 : 1, 11)(rng);
    c.shape.push_back(n);
    sizes.push_back(random_sizes(n, rng));
  }
  c.chunks = Chunks(sizes);
  return c;
}

// Expressions to check in one Python run: `name` is saved by numpy from `python`.
struct Expected {
  std::string name;
  std::string python;
  Array array;
};

void check_all(const TempDir& dir, const std::vector<Expected>& items) {
  std::string script = "a = np.load('a.npy')\nb = np.load('b.npy')\n";
  for (const Expected& e : items) absl::StrAppend(&script, "np.save('", e.name, ".npy', np.asarray(", e.python, "))\n");
  run_python_in(dir, script);
  int i = 0;
  for (const Expected& e : items) {
    NDArray got = e.array.compute({.num_workers = 1 + (i++ % 2)});
    check_close(got, npy::open(dir / (e.name + ".npy")), absl::StrCat(e.python, "  (tessera: ", e.array.name(), ")"));
  }
}

std::string case_text(const Case& c) {
  return absl::StrCat(std::string(c.dtype.name()), " ", shape_str(c.shape), " chunks ", c.chunks.str());
}

// A random case whose data numpy finds in a.npy and b.npy (b without zeros);
// returns the case and `a` as tessera reads it from the file.
std::pair<Case, Array> prepare(const TempDir& dir, std::mt19937_64& rng, bool allow_empty, NDArray* b_out = nullptr) {
  Case c = random_case(rng, allow_empty);
  NDArray a = random_block(c.dtype, c.shape, rng), b = random_block(c.dtype, c.shape, rng, /*nonzero=*/true);
  npy::save(dir / "a.npy", a);
  npy::save(dir / "b.npy", b);
  if (b_out) *b_out = b;
  return {c, from_npy(dir / "a.npy", c.chunks)};
}

}  // namespace

TEST_CASE("element-wise + - * / between arrays and with scalars equal numpy's" *
          python_peer::needed()) {
  std::mt19937_64 rng(20261130);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    NDArray b;
    auto [c, x] = prepare(dir, rng, round % 4 == 3, &b);
    INFO(case_text(c));
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
    INFO(case_text(c));
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
      std::string args = absl::StrCat("a, axis=", o.axis.empty() ? "None" : "(" + absl::StrJoin(axes, ",") + ",)",
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
    INFO(case_text(c));
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
