// tensordot, dot and matmul against numpy on random shapes, chunks and dtypes.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

Array cut(const NDArray& data, std::mt19937_64& rng) {
  std::vector<std::vector<int64_t>> sizes;
  for (int64_t n : data.shape()) sizes.push_back(random_sizes(n, rng));
  return from_ndarray(data, Chunks(sizes));
}

Shape random_shape(std::mt19937_64& rng, size_t ndim) {
  Shape s;
  for (size_t k = 0; k < ndim; ++k) s.push_back(std::uniform_int_distribution<int64_t>(1, 9)(rng));
  return s;
}

}  // namespace

TEST_CASE("matmul and dot of 1-D and 2-D arrays equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(51);
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    const DType da = kDTypes[rng() % std::size(kDTypes)], db = kDTypes[rng() % std::size(kDTypes)];
    INFO(da.name() << " with " << db.name());
    const int64_t m = 1 + rng() % 9, k = 1 + rng() % 12, n = 1 + rng() % 9;
    const Shape sa = rng() % 4 == 0 ? Shape{k} : Shape{m, k};
    const Shape sb = rng() % 4 == 0 ? Shape{k} : Shape{k, n};
    const NDArray a = random_block(da, sa, rng), b = random_block(db, sb, rng);
    npy::save(dir / "a.npy", a);
    npy::save(dir / "b.npy", b);
    const Array x = cut(a, rng), y = cut(b, rng);
    check_all(dir, {{"mm", "np.matmul(a, b)", matmul(x, y)}, {"dot", "np.dot(a, b)", dot(x, y)}});
  }
}

TEST_CASE("tensordot over random axes, with several blocks to sum, equals numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(53);
  const DType types[] = {DType::int32(), DType::uint8(), DType::float32(), DType::float64(), DType::complex128(),
                         DType::bool_()};
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    const DType d = types[rng() % std::size(types)];
    const Shape sa = random_shape(rng, 1 + rng() % 3);
    // b: its own free axes plus a's contracted ones, in shuffled order.
    std::vector<int> axes_a, axes_b;
    Shape sb = random_shape(rng, rng() % 2);
    for (size_t k = 0; k < sa.size(); ++k) {
      if (rng() % 2 == 0) continue;
      const size_t pos = rng() % (sb.size() + 1);
      for (int& j : axes_b) {
        if (j >= static_cast<int>(pos)) ++j;
      }
      sb.insert(sb.begin() + static_cast<long>(pos), sa[k]);
      axes_a.push_back(rng() % 2 ? static_cast<int>(k) : static_cast<int>(k) - static_cast<int>(sa.size()));
      axes_b.push_back(static_cast<int>(pos));
    }
    INFO(d.name() << " " << shape_str(sa) << " " << shape_str(sb));
    const NDArray a = random_block(d, sa, rng), b = random_block(d, sb, rng);
    npy::save(dir / "a.npy", a);
    npy::save(dir / "b.npy", b);
    const Array x = cut(a, rng), y = cut(b, rng);
    const std::string call = absl::StrCat("np.tensordot(a, b, axes=([", absl::StrJoin(axes_a, ","), "], [",
                                          absl::StrJoin(axes_b, ","), "]))");
    check_all(dir, {{"td", call, tensordot(x, y, {axes_a, axes_b}, 2 + static_cast<int>(rng() % 3))}});
  }
}

TEST_CASE("a matmul of many blocks sums its products by a tree" * python_peer::needed()) {
  TempDir dir;
  std::mt19937_64 rng(55);
  const NDArray a = random_block(DType::float64(), {6, 40}, rng), b = random_block(DType::float64(), {40, 5}, rng);
  npy::save(dir / "a.npy", a);
  npy::save(dir / "b.npy", b);
  const Array x = from_ndarray(a, {3, 3}), y = from_ndarray(b, {7, 5});  // contracted axis cut alike: 3s and 7s
  const Array z = tensordot(x, y, {{1}, {0}}, 2);
  CHECK(z.chunks() == Chunks({{3, 3}, {5}}));
  check_all(dir, {{"mm", "a @ b", z}});
}

TEST_CASE("linear algebra errors name the axes and shapes") {
  const Array x = zeros({5, 6}, {2, 3}), y = zeros({4, 5}, 2);
  REQUIRE_THROWS_WITH_AS(matmul(x, y),
                         "matmul: the last axis of the first operand ((5, 6)) does not match the first axis of the "
                         "second ((4, 5))",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(tensordot(x, y, {{1}, {0}}),
                         "tensordot: axis 1 of the first array (length 6) does not match axis 0 of the second "
                         "(length 4)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(tensordot(x, y, {{0, 1}, {1}}),
                         "tensordot: expected as many axes of the second array as of the first, found 1 and 2",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(tensordot(x, y, {{2}, {0}}), "tensordot: axis 2 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(tensordot(x, x, {{0, -2}, {0, 1}}), "tensordot: axis -2 of the first array is given twice",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(tensordot(x, y, {{0}, {1}}, 1), "tensordot: split_every must be at least 2, found 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(matmul(zeros({}, 1), x), "matmul: 0-d operands are not allowed (use multiply, the `*` operator)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(matmul(zeros({2, 5, 6}, 2), x),
                         "matmul: batched products (operands of more than 2 dimensions, here 3 and 2) are not "
                         "supported; use tensordot",
                         tessera::Error);
}
