// map_overlap against numpy: a box-sum kernel on blocks with halos equals the
// box sum over the whole array padded by numpy's matching mode.
#include <doctest/doctest.h>

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/core/grid.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/overlap.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

// Each element: the sum of the block's elements within `depth` of it on every
// axis, zero beyond the block (so the halo supplies what lies beyond).
NDArray box_sum(const NDArray& block, const std::vector<int64_t>& depth) {
  const NDArray b = c_contiguous(block);
  NDArray out = NDArray::zeros(b.dtype(), b.shape());
  const size_t nd = b.ndim();
  std::vector<int64_t> strides(nd, 1);
  for (size_t k = nd; k-- > 1;) strides[k - 1] = strides[k] * b.shape()[k];
  std::vector<int64_t> window;
  for (int64_t d : depth) window.push_back(2 * d + 1);
  dispatch(b.dtype(), [&]<class T>() {
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      const T* in = b.data<const T>();
      T* o = out.data<T>();
      for_each_index(b.shape(), [&](std::span<const int64_t> i) {
        T sum = 0;
        for_each_index(window, [&](std::span<const int64_t> w) {
          int64_t flat = 0;
          for (size_t k = 0; k < nd; ++k) {
            const int64_t c = i[k] + w[k] - depth[k];
            if (c < 0 || c >= b.shape()[k]) return;
            flat += c * strides[k];
          }
          sum += in[flat];
        });
        int64_t at = 0;
        for (size_t k = 0; k < nd; ++k) at += i[k] * strides[k];
        o[at] = sum;
      });
    }
  });
  return out;
}

// numpy's box sum over `a` padded by `mode` (constant: `value`).
std::string numpy_box_sum(const std::vector<int64_t>& depth, const std::string& mode, const std::string& value) {
  const std::string d = absl::StrCat("[", absl::StrJoin(depth, ","), "]");
  const std::string pad = mode == "constant" ? absl::StrCat("mode='constant', constant_values=", value)
                                             : absl::StrCat("mode='", mode, "'");
  return absl::StrCat("(lambda D, p: sum(p[tuple(slice(o[k], o[k] + a.shape[k]) for k in range(a.ndim))] ",
                      "for o in np.ndindex(*[2 * x + 1 for x in D])).astype(a.dtype))(", d, ", np.pad(a, [(x, x) for x in ",
                      d, "], ", pad, "))");
}

constexpr DType kNumeric[] = {DType::int32(), DType::int64(), DType::float32(), DType::float64()};

}  // namespace

TEST_CASE("map_overlap with every boundary equals numpy's padded box sum, depths beyond chunks rechunked" *
          python_peer::needed()) {
  std::mt19937_64 rng(83);
  const std::pair<Boundary, std::string> boundaries[] = {{Boundary::reflect, "symmetric"},
                                                         {Boundary::periodic, "wrap"},
                                                         {Boundary::nearest, "edge"},
                                                         {Boundary::constant, "constant"},
                                                         {Boundary::none, "constant"}};
  for (int round = 0; round < 6; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, false, nullptr, kNumeric);
    const std::string about = case_text(c);
    INFO(about);
    std::vector<Expected> items;
    for (const auto& [boundary, mode] : boundaries) {
      std::vector<int64_t> depth;
      for (int64_t n : c.shape) depth.push_back(static_cast<int64_t>(rng() % 3) % (n + 1));  // 0..2, at most n
      OverlapOptions o{.depth = depth, .boundary = boundary, .constant = Scalar(int64_t{3})};
      const Array y = map_overlap([depth](const NDArray& b) { return box_sum(b, depth); }, x, o);
      CHECK(y.chunks().shape() == x.shape());
      // none: edge blocks get no halo from beyond the array, which a kernel
      // that counts zeros beyond its block sees as a zero padding.
      items.push_back({absl::StrCat("o", items.size()),
                       numpy_box_sum(depth, mode, boundary == Boundary::none ? "0" : "3"), y});
    }
    check_all(dir, items);
  }
}

TEST_CASE("map_overlap keeps the chunks when each is at least the depth, and runs a kernel that changes the dtype") {
  const Array x = from_ndarray(NDArray::from_vector<int64_t>({0, 1, 2, 3, 4, 5, 6, 7, 8, 9}, {10}), ChunkSpec({{4, 4, 2}}));
  const Array y = map_overlap(
      [](const NDArray& b) {
        NDArray out = NDArray::empty(DType::float64(), b.shape());
        for (int64_t i = 0; i < b.size(); ++i) out.data<double>()[i] = static_cast<double>(b.data<const int64_t>()[i]) / 2;
        return out;
      },
      x, {.depth = {2}, .boundary = Boundary::periodic, .dtype = DType::float64()});
  CHECK(y.chunks().str() == x.chunks().str());
  const NDArray r = y.compute();
  for (int64_t i = 0; i < 10; ++i) CHECK(r.at<double>({i}) == static_cast<double>(i) / 2);
}

TEST_CASE("map_overlap errors say what was expected and what was found") {
  const Array x = zeros({6, 5}, {3, 2});
  auto same = [](const NDArray& b) { return b.copy(); };
  REQUIRE_THROWS_WITH_AS(map_overlap(same, x, {.depth = {1, 1, 1}}),
                         "map_overlap: expected one depth or one per axis (2), found 3", tessera::ChunkError);
  REQUIRE_THROWS_WITH_AS(map_overlap(same, x, {.depth = {-1}}), "map_overlap: expected depths of at least 0, found -1",
                         tessera::ChunkError);
  REQUIRE_THROWS_WITH_AS(map_overlap(same, x, {.depth = {1, 6}, .boundary = Boundary::periodic}),
                         "map_overlap: depth 6 along axis 1 is more than its 5 elements, which reflect and periodic "
                         "boundaries cannot fill",
                         tessera::ChunkError);
  REQUIRE_THROWS_WITH_AS(map_overlap(same, x, {.depth = {1, 2}, .allow_rechunk = false}),
                         "map_overlap: depth 2 along axis 1 is more than its smallest chunk (1 of ((3, 3), (2, 2, 1))); "
                         "allow_rechunk merges chunks, or rechunk first",
                         tessera::ChunkError);
  const Array bad = map_overlap([](const NDArray& b) { return NDArray::zeros(b.dtype(), {1}); }, x, {.depth = {1}});
  REQUIRE_THROWS_WITH_AS(bad.compute(), doctest::Contains("map_overlap"), tessera::Error);
}
