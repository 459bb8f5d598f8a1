// NDArray <-> Eigen Tensor: the maps, the copies, and every refusal with its message.
#include <doctest/doctest.h>

#include <vector>

#include "array/support.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/graph/error.hpp"

// A named namespace: scripts/test compiles a suite as one file, where another
// test file's helpers of the same name would clash.
namespace tensor_test {

using namespace tessera;
using namespace tessera::array;

namespace {

// 0, 1, 2, ... in C order (pattern_array's values, for arrays under 97 elements).
NDArray iota(const Shape& shape) { return testing::pattern_array(DType::float64(), shape); }

}  // namespace

TEST_CASE("tensor maps C-contiguous arrays row-major and refuses the wrong type, rank or layout") {
  NDArray a = iota({3, 4});
  auto t = a.tensor<const double, 2>();
  CHECK(t.dimension(0) == 3);
  CHECK(t(2, 1) == 9);
  Eigen::Tensor<double, 0, Eigen::RowMajor> total = t.sum();
  CHECK(total() == 66);
  NDArray out = NDArray::empty(DType::float64(), {3, 4});
  out.tensor<double, 2>() = t * 2.0 + 1.0;
  CHECK(out.at<double>({2, 3}) == 23);
  NDArray v = from_tensor(Eigen::Tensor<float, 1, Eigen::RowMajor>(5).setConstant(1.5f));
  CHECK(v.dtype() == DType::float32());
  CHECK(v.at<float>({4}) == 1.5f);

  REQUIRE_THROWS_WITH_AS((a.tensor<float, 2>()), "expected elements of type float32, found a float64 array of shape (3, 4)",
                         TypeError);
  REQUIRE_THROWS_WITH_AS((a.tensor<double, 3>()), "tensor: expected rank 3, found a float64 array of shape (3, 4) (rank 2)",
                         TypeError);
  REQUIRE_THROWS_WITH_AS((a.slice({Slice{}, Slice{0, 4, 2}}).tensor<double, 2>()),
                         doctest::Contains("is not C-contiguous; copy() it first"), Error);
  REQUIRE_THROWS_WITH_AS((a.copy(Order::F).tensor<double, 2>()), doctest::Contains("or take its transpose()"), Error);
  CHECK(a.copy(Order::F).transpose().tensor<const double, 2>()(3, 2) == 11);
  NDArray odd(Buffer::allocate(17, /*zero=*/true), DType::float64(), {2}, {8}, 1);  // a view at byte 1
  CHECK(odd.at<double>({1}) == odd.copy().at<double>({1}));
  REQUIRE_THROWS_WITH_AS((odd.tensor<const double, 1>()), doctest::Contains("not aligned to 8 bytes"), Error);
}

TEST_CASE("a mutable map writes through to the NDArray's memory, no copy") {
  NDArray a = iota({2, 3});
  auto t = a.tensor<double, 2>();
  CHECK(t.data() == a.data<double>());
  t(1, 2) = -1.0;
  t.chip(0, 0).setConstant(7.0);  // row 0
  CHECK(a.at<double>({1, 2}) == -1.0);
  CHECK(a.at<double>({0, 1}) == 7.0);
  // A view shares memory too: its map writes into the array it views.
  NDArray row = a.slice({Slice{1, 2}, Slice{}});
  row.tensor<double, 2>()(0, 0) = 42.0;
  CHECK(a.at<double>({1, 0}) == 42.0);
}

TEST_CASE("a strided view is refused by tensor() and mapped after c_contiguous") {
  NDArray a = iota({4, 6});
  NDArray strided = a.slice({Slice{0, 4, 2}, Slice{1, 6, 2}});  // a[::2, 1::2]
  REQUIRE_THROWS_WITH_AS((strided.tensor<const double, 2>()),
                         "tensor: the float64 array of shape (2, 3) with strides (96, 16) is not C-contiguous; "
                         "copy() it first",
                         Error);
  NDArray c = c_contiguous(strided);
  CHECK(c.is_c_contiguous());
  auto t = c.tensor<const double, 2>();
  CHECK(t(0, 0) == 1.0);
  CHECK(t(1, 2) == 17.0);
  // An array that is already C-contiguous comes back as itself, not a copy.
  CHECK(c_contiguous(a).data() == a.data());
}

TEST_CASE("a map of another element type or of read-only memory is refused, naming both sides") {
  NDArray ints = NDArray::zeros(DType::int32(), {2, 2});
  REQUIRE_THROWS_WITH_AS((ints.tensor<const double, 2>()),
                         "expected elements of type float64, found a int32 array of shape (2, 2)", TypeError);
  NDArray ro(Buffer(std::shared_ptr<std::byte>(new std::byte[32], std::default_delete<std::byte[]>()), 32, false),
             DType::float64(), {4}, {8}, 0);
  CHECK(ro.tensor<const double, 1>().size() == 4);
  REQUIRE_THROWS_WITH_AS((ro.tensor<double, 1>()),
                         "the float64 array of shape (4,) is read-only (a read-only mapping); ask for const float64 elements",
                         Error);
}

TEST_CASE("from_tensor copies an evaluated tensor into a new C-ordered block of its element type") {
  Eigen::Tensor<int64_t, 2, Eigen::RowMajor> t(2, 3);
  t.setValues({{1, 2, 3}, {4, 5, 6}});
  NDArray a = from_tensor(t);
  CHECK(a.dtype() == DType::int64());
  CHECK(a.shape() == Shape{2, 3});
  CHECK(a.at<int64_t>({1, 0}) == 4);
  t(1, 0) = 0;  // a copy: the block keeps its value
  CHECK(a.at<int64_t>({1, 0}) == 4);
  // The round trip: an expression over a map, evaluated, back to a block.
  Eigen::Tensor<int64_t, 2, Eigen::RowMajor> doubled = a.tensor<const int64_t, 2>() * int64_t{2};
  CHECK(array_equal(from_tensor(doubled), NDArray::from_vector(std::vector<int64_t>{2, 4, 6, 8, 10, 12}, {2, 3})));
}

}  // namespace tensor_test
