// Shape operations against numpy: transpose, moveaxis, swapaxes, squeeze,
// expand_dims, concatenate and stack on random shapes, chunks and dtypes.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

TEST_CASE("transpose, moveaxis, swapaxes, squeeze and expand_dims equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(17);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, round % 4 == 3);
    const std::string about = case_text(c);
    INFO(about);
    const int nd = static_cast<int>(c.shape.size());
    std::vector<int> perm(nd);
    std::iota(perm.begin(), perm.end(), 0);
    std::shuffle(perm.begin(), perm.end(), rng);
    const int a = static_cast<int>(rng() % nd), b = static_cast<int>(rng() % nd) - nd;
    const int e = static_cast<int>(rng() % (nd + 1));
    // An axis of length 1 inserted, then squeezed by name and by default.
    const Array ex = expand_dims(x, e);
    std::vector<Expected> items = {
        {"t", "a.T", transpose(x)},
        {"tp", absl::StrCat("np.transpose(a, (", absl::StrJoin(perm, ","), ",))"), transpose(x, perm)},
        {"m", absl::StrCat("np.moveaxis(a, ", a, ", ", b, ")"), moveaxis(x, a, b)},
        {"s", absl::StrCat("np.swapaxes(a, ", a, ", ", b, ")"), swapaxes(x, a, b)},
        {"e", absl::StrCat("np.expand_dims(a, ", e, ")"), ex},
        {"e2", absl::StrCat("np.expand_dims(a, ", -1 - e, ")"), expand_dims(x, -1 - e)},
        {"q", absl::StrCat("np.squeeze(np.expand_dims(a, ", e, "), axis=", e, ")"), squeeze(ex, std::vector<int>{e})},
        {"q2", absl::StrCat("np.squeeze(np.expand_dims(a, ", e, "))"), squeeze(ex)},
    };
    check_all(dir, items);
  }
}

TEST_CASE("concatenate and stack with other chunks and dtypes equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(23);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    NDArray bdata;
    auto [c, x] = prepare(dir, rng, round % 4 == 3, &bdata);
    const std::string about = case_text(c);
    INFO(about);
    // b cut differently and of another dtype: concatenate rechunks and promotes.
    std::vector<std::vector<int64_t>> sizes;
    for (int64_t n : c.shape) sizes.push_back(random_sizes(n, rng));
    const Array y = from_ndarray(bdata.astype(DType::float32()), Chunks(sizes));
    const Array z = from_ndarray(bdata, Chunks(sizes));
    const int nd = static_cast<int>(c.shape.size());
    const int axis = static_cast<int>(rng() % nd) - (rng() % 2 ? nd : 0);
    const int new_axis = static_cast<int>(rng() % (nd + 1));
    std::vector<Expected> items = {
        {"c", absl::StrCat("np.concatenate([a, b, a], axis=", axis, ")"), concatenate({x, z, x}, axis)},
        {"cf", absl::StrCat("np.concatenate([a, b.astype(np.float32)], axis=", axis, ")"), concatenate({x, y}, axis)},
        {"s", absl::StrCat("np.stack([a, b], axis=", new_axis, ")"), stack({x, z}, new_axis)},
        {"one", "np.concatenate([a])", concatenate({x})},
    };
    check_all(dir, items);
  }
}

TEST_CASE("concatenate keeps each input block as one output block") {
  const Array x = zeros({10, 4}, {4, 2}), y = ones({3, 4}, {3, 4});
  const Array c = concatenate({x, y});
  CHECK(c.chunks() == Chunks({{4, 4, 2, 3}, {2, 2}}));
  CHECK(transpose(c).chunks() == Chunks({{2, 2}, {4, 4, 2, 3}}));
  CHECK(stack({x, x}, 1).chunks() == Chunks({{4, 4, 2}, {1, 1}, {2, 2}}));
  CHECK(squeeze(x).name() == x.name());  // nothing to remove: the same array
  CHECK(transpose(x, std::vector<int>{0, 1}).name() == x.name());
}

TEST_CASE("shape operation errors name the axis or the shapes") {
  const Array x = zeros({5, 6}, {2, 3});
  REQUIRE_THROWS_WITH_AS(transpose(x, std::vector<int>{0, 0}),
                         "transpose: expected a permutation of the 2 axes of an array of shape (5, 6), found (0, 0)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(transpose(x, std::vector<int>{0}),
                         "transpose: expected a permutation of the 2 axes of an array of shape (5, 6), found (0)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(moveaxis(x, 2, 0), "moveaxis: axis 2 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(swapaxes(x, 0, -3), "swapaxes: axis -3 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(squeeze(x, std::vector<int>{1}),
                         "squeeze: cannot remove axis 1 of length 6 (only axes of length 1 can be removed) from an "
                         "array of shape (5, 6)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(expand_dims(x, 3), "expand_dims: axis 3 is out of bounds for an array of 3 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(concatenate({x, zeros({5, 7}, 3)}, 0),
                         "concatenate: array 1 has shape (5, 7), which does not match array 0's (5, 6) except along "
                         "axis 0",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(concatenate({x, zeros({5}, 3)}, 1),
                         "concatenate: array 1 has shape (5,), which does not match array 0's (5, 6) except along "
                         "axis 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(concatenate({}), "concatenate: needs at least one array, found none", tessera::Error);
  REQUIRE_THROWS_WITH_AS(concatenate({zeros({}, 1)}), "concatenate: zero-dimensional arrays cannot be concatenated",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(stack({x, zeros({6, 5}, 3)}),
                         "stack: all arrays must have one shape, but array 1 has shape (6, 5) and array 0 (5, 6)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(stack({x}, -4), "stack: axis -4 is out of bounds for an array of 3 dimension(s)",
                         tessera::Error);
}
