#include <doctest/doctest.h>

#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/scalar.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;

TEST_CASE("dtypes print and parse numpy's type strings and names") {
  struct Row {
    DType d;
    const char* str;
    const char* name;
    size_t itemsize;
  };
  const Row rows[] = {
      {DType::bool_(), "|b1", "bool", 1},         {DType::int8(), "|i1", "int8", 1},
      {DType::int16(), "<i2", "int16", 2},        {DType::int32(), "<i4", "int32", 4},
      {DType::int64(), "<i8", "int64", 8},        {DType::uint8(), "|u1", "uint8", 1},
      {DType::uint16(), "<u2", "uint16", 2},      {DType::uint32(), "<u4", "uint32", 4},
      {DType::uint64(), "<u8", "uint64", 8},      {DType::float16(), "<f2", "float16", 2},
      {DType::float32(), "<f4", "float32", 4},
      {DType::float64(), "<f8", "float64", 8},    {DType::complex64(), "<c8", "complex64", 8},
      {DType::complex128(), "<c16", "complex128", 16},
  };
  for (const Row& r : rows) {
    CAPTURE(r.str);
    CHECK(r.d.str() == r.str);
    CHECK(r.d.name() == r.name);
    CHECK(r.d.itemsize() == r.itemsize);
    CHECK(DType::parse(r.str) == r.d);
    CHECK(DType::parse(r.name) == r.d);
    CHECK(DType::parse(std::string("=") + (r.str + 1)) == r.d);
  }
  CHECK(DType::parse("<b1") == DType::bool_());
  CHECK(DType::parse("f8") == DType::float64());
  CHECK(DType::parse(">u1") == DType::uint8());  // one byte: byte order does not matter
}

TEST_CASE("unknown and big-endian type strings are refused with a clear message") {
  REQUIRE_THROWS_WITH_AS(DType::parse("<f16"), doctest::Contains("unknown dtype '<f16'"), TypeError);
  REQUIRE_THROWS_WITH_AS(DType::parse(""), doctest::Contains("expected a numpy type string"), TypeError);
  REQUIRE_THROWS_WITH_AS(DType::parse("<U10"), doctest::Contains("unknown dtype"), TypeError);
  REQUIRE_THROWS_WITH_AS(DType::parse(">f8"), doctest::Contains("big-endian"), TypeError);
}

TEST_CASE("big-endian type strings parse for readers that swap, and byteswap swaps each element") {
  bool big = false;
  CHECK(DType::parse(">f8", &big) == DType::float64());
  CHECK(big);
  CHECK(DType::parse("<i2", &big) == DType::int16());
  CHECK(!big);
  CHECK(DType::parse(">u1", &big) == DType::uint8());
  CHECK(!big);  // one byte: no order
  CHECK(DType::complex64().big_endian_str() == ">c8");
  CHECK(DType::bool_().big_endian_str() == "|b1");
  uint32_t v[2] = {0x01020304u, 0xA0B0C0D0u};
  byteswap(reinterpret_cast<std::byte*>(v), 2, DType::uint32());
  CHECK(v[0] == 0x04030201u);
  CHECK(v[1] == 0xD0C0B0A0u);
  uint16_t c[4] = {0x0102, 0x0304, 0x0506, 0x0708};  // one complex number's halves would be 4 bytes in complex64
  byteswap(reinterpret_cast<std::byte*>(c), 1, DType::complex64());
  CHECK(c[0] == 0x0403);
  CHECK(c[1] == 0x0201);
  CHECK(c[2] == 0x0807);
  CHECK(c[3] == 0x0605);
  CHECK(DType::parse(">f2", &big) == DType::float16());
  CHECK(big);
  CHECK(DType::float16().big_endian_str() == ">f2");
  uint16_t h[2] = {0x3c00, 0x7e00};  // 1.0 and NaN in float16
  byteswap(reinterpret_cast<std::byte*>(h), 2, DType::float16());
  CHECK(h[0] == 0x003c);
  CHECK(h[1] == 0x007e);
}

TEST_CASE("C++ types map to dtypes and dispatch visits the C++ type") {
  static_assert(dtype_of<double> == DType::float64());
  static_assert(dtype_of<const float> == DType::float32());
  static_assert(dtype_of<long long> == DType::int64());
  static_assert(dtype_of<unsigned char> == DType::uint8());
  static_assert(dtype_of<bool> == DType::bool_());
  static_assert(dtype_of<std::complex<float>> == DType::complex64());
  static_assert(dtype_of<Eigen::half> == DType::float16() && DType::float16().is_floating());
  static_assert(is_floating_v<Eigen::half> && is_floating_v<const double> && !is_floating_v<int>);
  static_assert(Element<int16_t> && !Element<std::string> && !Element<long double*>);
  for (int i = 0; i < DType::count; ++i) {
    DType d = static_cast<DType::Id>(i);
    CHECK(dispatch(d, [&]<class T>() { return dtype_of<T>; }) == d);
    CHECK(dispatch(d, [&]<class T>() { return sizeof(T); }) == d.itemsize());
  }
}

TEST_CASE("scalars convert to element types and refuse what does not fit") {
  CHECK(Scalar(3).to<double>() == 3.0);
  CHECK(Scalar(2.9).to<int32_t>() == 2);
  CHECK(Scalar(-2.9).to<int8_t>() == -2);
  CHECK(Scalar(255).to<uint8_t>() == 255);
  CHECK(Scalar(0.0).to<bool>() == false);
  CHECK(Scalar(std::complex<double>(1, 2)).to<std::complex<float>>() == std::complex<float>(1, 2));
  CHECK(Scalar(1.5).to<std::complex<double>>() == std::complex<double>(1.5, 0));
  CHECK(Scalar(uint64_t{1} << 63).to<uint64_t>() == uint64_t{1} << 63);
  CHECK(Scalar(true).dtype() == DType::bool_());
  CHECK(Scalar(std::nan("")) == Scalar(std::nan("")));
  CHECK(Scalar(std::complex<double>(1, -2)).str() == "(1-2j)");
  REQUIRE_THROWS_WITH_AS(Scalar(256).to<uint8_t>(), "the value 256 (int64) cannot be represented as uint8",
                         TypeError);
  REQUIRE_THROWS_WITH_AS(Scalar(std::nan("")).to<int64_t>(), doctest::Contains("nan"), TypeError);
  REQUIRE_THROWS_AS(Scalar(1e19).to<int64_t>(), TypeError);
  REQUIRE_THROWS_AS(Scalar(-1).to<uint32_t>(), TypeError);
  REQUIRE_THROWS_AS(Scalar(std::complex<double>(1, 1)).to<double>(), TypeError);
}

TEST_CASE("float16 scalars round to nearest even and hold every float16 exactly") {
  CHECK(Scalar(Eigen::half(0.1f)).to<double>() == 0.0999755859375);  // float16's nearest to 0.1
  CHECK(Scalar(Eigen::half(0.1f)).dtype() == DType::float64());
  CHECK(Scalar(2049).to<Eigen::half>() == Eigen::half(2048.0f));  // a tie: to the even 2048
  CHECK(Scalar(2051).to<Eigen::half>() == Eigen::half(2052.0f));
  CHECK(Scalar(65504.0).to<Eigen::half>() == Eigen::half(65504.0f));  // float16's largest
  CHECK(std::isinf(static_cast<float>(Scalar(1e6).to<Eigen::half>())));  // numpy gives inf too
  CHECK(std::isnan(static_cast<float>(Scalar(std::nan("")).to<Eigen::half>())));
  CHECK(Scalar(Eigen::half(-3.5f)).to<int32_t>() == -3);
  CHECK(Scalar(true).to<Eigen::half>() == Eigen::half(1.0f));
  CHECK(Scalar(std::complex<double>(1.5, 0)).to<Eigen::half>() == Eigen::half(1.5f));
  REQUIRE_THROWS_WITH_AS(Scalar(std::complex<double>(1, 1)).to<Eigen::half>(),
                         "the value (1+1j) (complex128) cannot be represented as float16", TypeError);
}
