// FFTs of lazy Arrays against numpy.fft: random shapes, chunks and dtypes, every
// transform with and without n and each norm, and the errors.
#include <doctest/doctest.h>

#include <random>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/fft_kernel.hpp"
#include "array/ops/numpy_check.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

const char* const kNorms[] = {"backward", "ortho", "forward"};

// numpy 1.x returns complex128 (float64 from irfft) for every input; tessera keeps
// single precision as numpy 2 does, so numpy's result is cast for the comparison.
std::string numpy_result(const std::string& call, DType in, bool real_out) {
  const bool single = in == DType::float32() || in == DType::complex64();
  if (!single) return call;
  return absl::StrCat(call, ".astype(np.", real_out ? "float32" : "complex64", ")");
}

}  // namespace

TEST_CASE("fft, ifft, rfft and irfft along one axis, with n and norm, equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(13);
  const char* names[] = {"fft", "ifft", "rfft", "irfft"};
  const FftKind kinds[] = {FftKind::forward, FftKind::inverse, FftKind::real, FftKind::inverse_real};
  for (int round = 0; round < 10; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, round % 5 == 4);
    const std::string about = case_text(c);
    INFO(about);
    std::vector<Expected> items;
    for (int j = 0; j < 10; ++j) {
      const int k = static_cast<int>(rng() % 4);
      if (kinds[k] == FftKind::real && c.dtype.is_complex()) continue;  // refused; tested apart
      const int nd = static_cast<int>(c.shape.size());
      const int axis = static_cast<int>(rng() % nd) - (rng() % 2 ? nd : 0);
      const int64_t m = c.shape[axis < 0 ? axis + nd : axis];
      FftOptions o{.axis = axis, .norm = static_cast<FftNorm>(rng() % 3)};
      if (rng() % 2 || m < 2) o.n = std::uniform_int_distribution<int64_t>(1, 13)(rng);
      const std::string call = absl::StrCat("np.fft.", names[k], "(a, n=", o.n ? std::to_string(*o.n) : "None",
                                            ", axis=", axis, ", norm='", kNorms[static_cast<int>(o.norm)], "')");
      const Array r = kinds[k] == FftKind::forward   ? fft(x, o)
                      : kinds[k] == FftKind::inverse ? ifft(x, o)
                      : kinds[k] == FftKind::real    ? rfft(x, o)
                                                     : irfft(x, o);
      CHECK(r.dtype() == fft_result_dtype(kinds[k], c.dtype));
      items.push_back({absl::StrCat("f", j), numpy_result(call, c.dtype, kinds[k] == FftKind::inverse_real), r});
    }
    check_all(dir, items);
  }
}

TEST_CASE("fftn, ifftn, rfftn, fft2, ifft2 and rfft2 over axes equal numpy's" * python_peer::needed()) {
  std::mt19937_64 rng(31);
  for (int round = 0; round < 8; ++round) {
    TempDir dir;
    auto [c, x] = prepare(dir, rng, false);
    const std::string about = case_text(c);
    INFO(about);
    const int nd = static_cast<int>(c.shape.size());
    std::vector<Expected> items;
    for (int j = 0; j < 8; ++j) {
      std::vector<int> axes;
      std::vector<std::string> text;
      for (int k = 0; k < nd; ++k) {
        if (rng() % 3 == 0) continue;
        axes.push_back(rng() % 2 ? k : k - nd);
        text.push_back(std::to_string(axes.back()));
      }
      if (axes.empty()) {
        axes.push_back(nd - 1);
        text.push_back(std::to_string(nd - 1));
      }
      const FftNorm norm = static_cast<FftNorm>(rng() % 3);
      const std::string args =
          absl::StrCat("a, axes=(", absl::StrJoin(text, ","), ",), norm='", kNorms[static_cast<int>(norm)], "')");
      const FftNOptions o{.axes = axes, .norm = norm};
      const int op = static_cast<int>(rng() % (c.dtype.is_complex() ? 2 : 3));
      const char* name = op == 0 ? "fftn" : op == 1 ? "ifftn" : "rfftn";
      const Array r = op == 0 ? fftn(x, o) : op == 1 ? ifftn(x, o) : rfftn(x, o);
      items.push_back({absl::StrCat("n", j), numpy_result(absl::StrCat("np.fft.", name, "(", args), c.dtype, false), r});
    }
    if (nd >= 2) {
      items.push_back({"f2", numpy_result("np.fft.fft2(a)", c.dtype, false), fft2(x)});
      items.push_back({"i2", numpy_result("np.fft.ifft2(a)", c.dtype, false), ifft2(x)});
      if (!c.dtype.is_complex()) items.push_back({"r2", numpy_result("np.fft.rfft2(a)", c.dtype, false), rfft2(x)});
    }
    items.push_back({"all", numpy_result("np.fft.fftn(a)", c.dtype, false), fftn(x)});
    check_all(dir, items);
  }
}

TEST_CASE("long lines, strided panels and lengths with large prime factors equal numpy's" * python_peer::needed()) {
  // (37, 300): axis 0 is transformed through panels of 16 strided lines (300 is
  // not a multiple of 16); 300 = 4 * 3 * 25 and 37 is prime.
  std::mt19937_64 rng(3);
  for (DType d : {DType::float32(), DType::float64()}) {
    TempDir dir;
    npy::save(dir / "a.npy", random_block(d, {37, 300}, rng));
    npy::save(dir / "b.npy", random_block(d, {37, 300}, rng));
    const Array x = from_npy(dir / "a.npy", {10, 70});
    check_all(dir, {
                       {"f2", numpy_result("np.fft.fft2(a)", d, false), fft2(x)},
                       {"r2", numpy_result("np.fft.rfft2(a)", d, false), rfft2(x)},
                       {"c0", numpy_result("np.fft.fft(a, axis=0, n=64)", d, false), fft(x, {.n = 64, .axis = 0})},
                       {"ir", numpy_result("np.fft.irfft(np.fft.rfft(a), n=300)", d, true),
                        irfft(rfft(x), {.n = 300})},
                       {"ir0", numpy_result("np.fft.irfft(a, axis=0)", d, true), irfft(x, {.axis = 0})},
                   });
  }
}

TEST_CASE("lines in lanes: odd, packed, cropped and padded lengths of small primes equal numpy's" *
          python_peer::needed()) {
  // (45, 26): 45 = 3 * 3 * 5 and 26 = 2 * 13 go through the lane kernel, several
  // lines at once. Axis 0 has 26 strided lines (not a multiple of the lanes),
  // axis 1 has 45 contiguous ones; rfft of 26 packs 13 complex points, rfft of
  // 45 (odd) takes the full complex transform, n = 22 crops to 2 * 11 and n = 34
  // pads to 2 * 17, whose factor 17 goes back to kissfft.
  std::mt19937_64 rng(5);
  for (DType d : {DType::float32(), DType::complex64(), DType::float64(), DType::complex128()}) {
    INFO(d.name());
    TempDir dir;
    npy::save(dir / "a.npy", random_block(d, {45, 26}, rng));
    npy::save(dir / "b.npy", random_block(d, {45, 26}, rng));
    const Array x = from_npy(dir / "a.npy", {7, 10});
    std::vector<Expected> items = {
        {"c0", numpy_result("np.fft.fft(a, axis=0)", d, false), fft(x, {.axis = 0})},
        {"c1", numpy_result("np.fft.fft(a, axis=1)", d, false), fft(x, {.axis = 1})},
        {"i0", numpy_result("np.fft.ifft(a, axis=0, norm='ortho')", d, false),
         ifft(x, {.axis = 0, .norm = FftNorm::ortho})},
        {"p0", numpy_result("np.fft.fft(a, axis=0, n=60)", d, false), fft(x, {.n = 60, .axis = 0})},
    };
    if (!d.is_complex()) {
      items.push_back({"r1", numpy_result("np.fft.rfft(a, axis=1)", d, false), rfft(x, {.axis = 1})});
      items.push_back({"r0", numpy_result("np.fft.rfft(a, axis=0)", d, false), rfft(x, {.axis = 0})});
      items.push_back({"rc", numpy_result("np.fft.rfft(a, n=22, norm='forward')", d, false),
                       rfft(x, {.n = 22, .norm = FftNorm::forward})});
      items.push_back({"rp", numpy_result("np.fft.rfft(a, axis=0, n=34)", d, false), rfft(x, {.n = 34, .axis = 0})});
    }
    check_all(dir, items);
  }
}

TEST_CASE("the lane kernel serves small-prime lengths but contiguous float64 rfft of 4 * 3 * 5 multiples") {
  using detail::FftKernel;
  using detail::fft_kernel_for;
  const DType f32 = DType::float32(), f64 = DType::float64(), c128 = DType::complex128();
  CHECK(fft_kernel_for(FftKind::real, f32, 3000, {10, 3000}, 1) == FftKernel::lanes);
  CHECK(fft_kernel_for(FftKind::real, f64, 3000, {10, 3000}, 1) == FftKernel::eigen);
  CHECK(fft_kernel_for(FftKind::real, f64, 3000, {3000, 10}, 0) == FftKernel::lanes);  // strided lines
  CHECK(fft_kernel_for(FftKind::real, f64, 2048, {10, 2048}, 1) == FftKernel::lanes);
  CHECK(fft_kernel_for(FftKind::real, f64, 3120, {10, 3120}, 1) == FftKernel::lanes);  // 3120 = 16 * 3 * 5 * 13
  CHECK(fft_kernel_for(FftKind::forward, c128, 3000, {10, 3000}, 1) == FftKernel::lanes);
  CHECK(fft_kernel_for(FftKind::forward, c128, 34, {10, 34}, 1) == FftKernel::eigen);  // 2 * 17
  CHECK(fft_kernel_for(FftKind::inverse_real, c128, 26, {10, 14}, 1) == FftKernel::eigen);
}

TEST_CASE("the lane kernel and Eigen's FFT give the same transform") {
  std::mt19937_64 rng(7);
  for (DType d : {DType::float32(), DType::complex128()}) {
    INFO(d.name());
    const NDArray a = random_block(d, {12, 180}, rng);
    const FftKind kind = d.is_complex() ? FftKind::forward : FftKind::real;
    const DType out = fft_result_dtype(kind, d);
    for (size_t axis : {0, 1}) {
      const int64_t n = a.shape()[axis];
      const NDArray lanes = detail::fft_block_with(a, kind, axis, n, FftNorm::ortho, out, detail::FftKernel::lanes);
      const NDArray eigen = detail::fft_block_with(a, kind, axis, n, FftNorm::ortho, out, detail::FftKernel::eigen);
      REQUIRE(lanes.shape() == eigen.shape());
      const double tolerance = d == DType::float32() ? 1e-4 : 1e-12;
      dispatch(out, [&]<class T>() {
        if constexpr (requires { typename T::value_type; }) {
          for (int64_t i = 0; i < lanes.size(); ++i) {
            CHECK(std::abs(lanes.data<T>()[i] - eigen.data<T>()[i]) < tolerance);
          }
        }
      });
    }
  }
}

TEST_CASE("a transform makes its axis one chunk and keeps the other axes' chunks") {
  const Array x = zeros({20, 30}, {7, 8});
  const Array f = fft(x, {.axis = 0});
  CHECK(f.chunks() == Chunks({{20}, {8, 8, 8, 6}}));
  const Array r = rfft(x, {.n = 10});
  CHECK(r.chunks() == Chunks({{7, 7, 6}, {6}}));
  CHECK(r.dtype() == DType::complex128());
  CHECK(irfft(r).chunks() == Chunks({{7, 7, 6}, {10}}));
  CHECK(irfft(r).dtype() == DType::float64());
  CHECK(fft(zeros({4}, 4, DType::float32())).dtype() == DType::complex64());
  CHECK(fft(zeros({4}, 4, DType::int16())).dtype() == DType::complex128());
  CHECK(irfft(zeros({4}, 4, DType::complex64())).dtype() == DType::float32());
}

TEST_CASE("fft errors name the axis, the number of points or the dtype") {
  const Array x = zeros({5, 6}, {2, 3});
  REQUIRE_THROWS_WITH_AS(fft(x, {.axis = 2}), "fft: axis 2 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(ifft(x, {.axis = -3}), "ifft: axis -3 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(fft(x, {.n = 0}),
                         "fft: invalid number of data points (0) along axis 1 of length 6; expected at least 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(irfft(zeros({5, 1}, 1), {.axis = 1}),
                         "irfft: invalid number of data points (0) along axis 1 of length 1; expected at least 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(fft(zeros({0}, 1)),
                         "fft: invalid number of data points (0) along axis 0 of length 0; expected at least 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(rfft(zeros({4}, 4, DType::complex64())),
                         "rfft needs real input, found complex64; use fft for complex data", tessera::TypeError);
  REQUIRE_THROWS_WITH_AS(fft2(zeros({4}, 4)), "fft2: needs an array of at least two dimensions, found 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(fft(zeros({}, 1)), "fft: needs an array of at least one dimension, found a 0-d array",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(fftn(x, {.axes = std::vector<int>{0, 5}}),
                         "fftn: axis 5 is out of bounds for an array of 2 dimension(s)", tessera::Error);
  REQUIRE_THROWS_WITH_AS(rfftn(x, {.axes = std::vector<int>{}}), "rfftn: needs at least one axis, found none",
                         tessera::Error);
}
