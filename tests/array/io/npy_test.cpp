#include <doctest/doctest.h>

#include <cstring>
#include <random>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/support.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/graph/error.hpp"
#include "python_peer.hpp"

using namespace tessera;
using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

DType all_dtypes(int i) { return static_cast<DType::Id>(i); }

// A header dict padded to 64 bytes after a version-1.0 preamble.
std::string npy_v1(const std::string& dict, const std::string& data = "") {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = std::string("\x93NUMPY\x01\x00", 8);
  out += static_cast<char>(h.size() & 0xFF);
  out += static_cast<char>(h.size() >> 8);
  return out + h + data;
}

}  // namespace

TEST_CASE("npy: files numpy writes open as mapped views, in every dtype, order and format version" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
for name in ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
             'float16', 'float32', 'float64', 'complex64', 'complex128']:
    a = pattern(name, (5, 7))
    np.save(f'{d}/{name}-C.npy', a)
    np.save(f'{d}/{name}-F.npy', np.asfortranarray(a))
for version in [(1, 0), (2, 0), (3, 0)]:
    with open(f'{d}/v{version[0]}.npy', 'wb') as f:
        np.lib.format.write_array(f, pattern('<i4', (3, 4, 2)), version=version)
np.save(f'{d}/scalar.npy', np.float64(2.5))
np.save(f'{d}/empty.npy', np.zeros((0, 3), dtype='<f4'))
)");
  for (int i = 0; i < DType::count; ++i) {
    const DType dtype = all_dtypes(i);
    for (const char* order : {"C", "F"}) {
      CAPTURE(dtype.name());
      CAPTURE(order);
      NDArray a = npy::open(dir / (dtype.name() + "-" + order + ".npy"));
      CHECK(a.dtype() == dtype);
      CHECK(a.shape() == Shape{5, 7});
      CHECK(!a.writable());
      CHECK(a.is_c_contiguous() == (order[0] == 'C'));
      CHECK(a.is_f_contiguous() == (order[0] == 'F'));
      CHECK(array_equal(a, pattern_array(dtype, {5, 7})));
    }
  }
  for (int v : {1, 2, 3}) {
    CAPTURE(v);
    const std::string path = dir / absl::StrCat("v", v, ".npy");
    CHECK(npy::read_header(path).major == v);
    CHECK(array_equal(npy::open(path), pattern_array(DType::int32(), {3, 4, 2})));
  }
  NDArray s = npy::open(dir / "scalar.npy");
  CHECK(s.shape() == Shape{});
  CHECK(s.at<double>({}) == 2.5);
  CHECK(npy::open(dir / "empty.npy").shape() == Shape{0, 3});
}

TEST_CASE("npy: files tessera creates load in numpy, C and Fortran order" *
          python_peer::needed()) {
  TempDir dir;
  for (int i = 0; i < DType::count; ++i) {
    const DType dtype = all_dtypes(i);
    npy::save(dir / (dtype.name() + "-C.npy"), pattern_array(dtype, {4, 6}));
    NDArray f = npy::create(dir / (dtype.name() + "-F.npy"), dtype, {4, 6}, /*fortran_order=*/true);
    CHECK(f.is_f_contiguous());
    CHECK(f.writable());
    f.assign(pattern_array(dtype, {4, 6}));
  }
  npy::create(dir / "scalar.npy", DType::int16(), {}).fill(-3);
  npy::save(dir / "strided.npy", pattern_array(DType::float64(), {6, 6}).slice({Slice{1, std::nullopt, 2}, Slice{std::nullopt, std::nullopt, -3}}));
  std::string out = run_python(dir, std::string(kPythonPattern) + R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
for name in ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
             'float16', 'float32', 'float64', 'complex64', 'complex128']:
    for order in 'CF':
        a = np.load(f'{d}/{name}-{order}.npy')
        assert a.dtype == np.dtype(name), (name, a.dtype)
        assert a.flags.f_contiguous == (order == 'F') or a.ndim < 2, (name, order)
        assert np.array_equal(a, pattern(name, (4, 6))), (name, order, a)
s = np.load(f'{d}/scalar.npy')
assert s.shape == () and s.dtype == np.int16 and s == -3, s
st = np.load(f'{d}/strided.npy')
assert np.array_equal(st, pattern('<f8', (6, 6))[1::2, ::-3]), st
print('ok')
)");
  CHECK(out == "ok\n");
}

TEST_CASE("npy: writes through a read-write view reach the file") {
  TempDir dir;
  npy::save(dir / "a.npy", pattern_array(DType::float64(), {3}));
  npy::open(dir / "a.npy", Access::ReadWrite).fill(7.0);
  CHECK(npy::open(dir / "a.npy").at<double>({2}) == 7.0);
  REQUIRE_THROWS_WITH_AS(npy::open(dir / "a.npy").fill(1.0), doctest::Contains("is read-only"), Error);
}

TEST_CASE("npy: a view keeps its mapping alive after the file is gone") {
  TempDir dir;
  npy::save(dir / "a.npy", pattern_array(DType::int64(), {1000}));
  NDArray a = npy::open(dir / "a.npy");
  std::filesystem::remove(dir / "a.npy");
  CHECK(a.at<int64_t>({999}) == 999 % 97);
}

TEST_CASE("npy: truncated and garbage files give StorageError naming the path") {
  TempDir dir;
  auto fails_with = [&](const std::string& bytes, const std::string& message) {
    CAPTURE(message);
    const std::string path = dir / "bad.npy";
    write_bytes(path, bytes);
    REQUIRE_THROWS_WITH_AS(npy::open(path), doctest::Contains(message.c_str()), StorageError);
    REQUIRE_THROWS_WITH_AS(npy::open(path), doctest::Contains(path.c_str()), StorageError);
    REQUIRE_THROWS_WITH_AS(npy::read_header(path), doctest::Contains(message.c_str()), StorageError);  // at open
  };
  const std::string good = "{'descr': '<f8', 'fortran_order': False, 'shape': (2,), }";
  fails_with("", "expected the magic string");
  fails_with("\x93NUMPX\x01\x00", "expected the magic string");
  fails_with(std::string("\x93NUMPY\x01\x00", 8), "not a .npy file");
  fails_with(std::string("\x93NUMPY\x04\x00\x10\x00", 10), "unsupported .npy format version 4.0");
  fails_with(std::string("\x93NUMPY\x01\x00\xff\x00{'descr'", 17), "truncated .npy header: it says 255 bytes");
  fails_with(npy_v1("[1, 2]"), "expected a dict, found a list");
  fails_with(npy_v1("{'descr': '<f8', 'shape': (2,)}"), "expected the key 'fortran_order'");
  fails_with(npy_v1("{'descr': '<f8', 'fortran_order': 0, 'shape': (2,)}"),
             "expected 'fortran_order' to be a bool, found an integer");
  fails_with(npy_v1("{'descr': '<U5', 'fortran_order': False, 'shape': (2,)}"), "unsupported dtype in .npy header");
  fails_with(npy_v1("{'descr': [('a', '<f8')], 'fortran_order': False, 'shape': (2,)}"), "structured dtypes");
  fails_with(npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (2, -1)}"), "has a negative extent");
  fails_with(npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296)}"), "is too large");
  fails_with(npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': (99999999999999999999,)}"),
             "expected an integer that fits in 64 bits");
  fails_with(npy_v1("{'descr': '<f8', 'fortran_order': False, 'shape': ('a',)}"), "to hold integers, found a string");
  fails_with(npy_v1("{'descr': '<f8, 'fortran_order': False}"), "bad .npy header");
  fails_with(npy_v1("{'descr': '<f8' 'fortran_order': False}"), "expected ',' or '}'");
  fails_with(npy_v1(std::string(500, '(') + std::string(500, ')')), "nested at most 16 deep");
  fails_with(npy_v1(std::string(200, '\xff')), "bad .npy header");
  fails_with(npy_v1(good, std::string(15, 'x')),
             "the header promises 16 bytes of data for a float64 array of shape (2,) (144 bytes in all), but the "
             "file has 15 bytes of data (143 bytes in all)");
  fails_with(npy_v1(good, std::string(17, 'x')), "but the file has 17 bytes of data");
  REQUIRE_THROWS_WITH_AS(npy::open(dir / "missing.npy"), doctest::Contains("No such file or directory"), StorageError);
  REQUIRE_THROWS_WITH_AS(npy::open(dir.path().string()), doctest::Contains("expected a regular file"), StorageError);
  // The good header with the right data size opens.
  write_bytes(dir / "ok.npy", npy_v1(good, std::string(16, '\0')));
  CHECK(npy::open(dir / "ok.npy").at<double>({1}) == 0.0);
}

TEST_CASE("slicing with steps matches numpy on random shapes and slices" *
          python_peer::needed()) {
  TempDir dir;
  std::mt19937 rng(20261130);
  auto pick = [&](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  auto py = [](std::optional<int64_t> v) { return v ? std::to_string(*v) : std::string("None"); };
  std::string cases = "cases = []\n";
  for (int k = 0; k < 60; ++k) {
    Shape shape(static_cast<size_t>(pick(1, 3)));
    for (auto& e : shape) e = pick(0, 6);
    std::vector<Slice> slices;
    std::vector<std::string> text;
    const size_t given = static_cast<size_t>(pick(0, static_cast<int>(shape.size())));
    for (size_t a = 0; a < given; ++a) {
      if (shape[a] > 0 && pick(0, 6) == 0) {
        const int64_t i = pick(static_cast<int>(-shape[a]), static_cast<int>(shape[a]) - 1);
        slices.push_back(Slice::index(i));
        text.push_back(std::to_string(i));
        continue;
      }
      auto bound = [&]() -> std::optional<int64_t> {
        if (pick(0, 3) == 0) return std::nullopt;
        return pick(-8, 8);
      };
      const int steps[] = {-3, -2, -1, 1, 1, 2, 3};
      Slice s(bound(), bound(), steps[pick(0, 6)]);
      slices.push_back(s);
      text.push_back(absl::StrCat("slice(", py(s.start), ", ", py(s.stop), ", ", s.step, ")"));
    }
    npy::save(dir / absl::StrCat("r", k, ".npy"), pattern_array(DType::float64(), shape).slice(slices));
    absl::StrAppend(&cases, "cases.append((", shape_str(shape), ", (", absl::StrJoin(text, ", "),
                    text.size() == 1 ? "," : "", ")))\n");
  }
  std::string out = run_python(dir, std::string(kPythonPattern) + cases + R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
for k, (shape, index) in enumerate(cases):
    want = pattern('<f8', shape)[index]
    got = np.load(f'{d}/r{k}.npy')
    assert got.shape == want.shape and np.array_equal(got, want), (k, shape, index, got, want)
print('ok')
)");
  CHECK(out == "ok\n");
}

TEST_CASE("npy: big-endian files read into native order (in from_npy's blocks too) and are written when asked" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
for t in ['>f8', '>i4', '>u2', '>c8', '>f2']:
    np.save(f'{d}/be{t[1:]}.npy', pattern(t, (5, 3)))
np.save(f'{d}/fbe.npy', np.asfortranarray(pattern('>i8', (4, 6))))
)");
  for (DType dtype : {DType::float64(), DType::int32(), DType::uint16(), DType::complex64(), DType::float16()}) {
    const std::string path = dir / ("be" + dtype.str().substr(1) + ".npy");
    CAPTURE(path);
    CHECK(npy::read_header(path).big_endian);
    CHECK(array_equal(npy::open(path), pattern_array(dtype, {5, 3})));
    CHECK(array_equal(from_npy(path, {2, 2}).compute({.num_workers = 2}), pattern_array(dtype, {5, 3})));
    npy::save(dir / ("out" + dtype.str().substr(1) + ".npy"), pattern_array(dtype, {5, 3}), /*big_endian=*/true);
  }
  CHECK(array_equal(npy::open(dir / "fbe.npy"), pattern_array(DType::int64(), {4, 6})));
  REQUIRE_THROWS_WITH_AS(npy::open(dir / "fbe.npy", Access::ReadWrite),
                         doctest::Contains("a big-endian .npy file cannot be opened read-write"), StorageError);
  CHECK(run_python(dir, std::string(kPythonPattern) + R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
for t in ['>f8', '>i4', '>u2', '>c8', '>f2']:
    a = np.load(f'{d}/out{t[1:]}.npy')
    assert a.dtype == np.dtype(t), a.dtype
    assert np.array_equal(a, pattern(t, (5, 3))), a
print('ok')
)") == "ok\n");
}

TEST_CASE("npy: every float16 bit pattern numpy writes, in both byte orders, reads back bit for bit, and back" *
          python_peer::needed()) {
  // All 65536 patterns: subnormals, infinities and NaNs with payloads included,
  // so a conversion through float anywhere on the way would show.
  TempDir dir;
  run_python(dir, R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
bits = np.arange(65536, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
np.save(f'{d}/le.npy', bits.view('<f2'))
np.save(f'{d}/be.npy', bits.view('<f2').astype('>f2'))
)");
  NDArray bits = NDArray::empty(DType::uint16(), {256, 256});
  for (int64_t i = 0; i < bits.size(); ++i) bits.data<uint16_t>()[i] = static_cast<uint16_t>(i);
  for (const char* name : {"le.npy", "be.npy"}) {
    CAPTURE(name);
    const std::string path = dir / name;
    CHECK(npy::read_header(path).big_endian == (name[0] == 'b'));
    const NDArray a = from_npy(path, {100, 77}).compute({.num_workers = 2});
    REQUIRE(a.dtype() == DType::float16());
    CHECK(std::memcmp(a.data(), bits.data(), bits.nbytes()) == 0);
  }
  NDArray h = NDArray::empty(DType::float16(), {256, 256});
  std::memcpy(h.data(), bits.data(), bits.nbytes());
  npy::save(dir / "out-le.npy", h);
  npy::save(dir / "out-be.npy", h, /*big_endian=*/true);
  CHECK(run_python(dir, R"(
import sys
d = sys.argv[0].rsplit('/', 1)[0]
bits = np.arange(65536, dtype=np.uint32).astype(np.uint16).reshape(256, 256)
for name, t in [('out-le', '<f2'), ('out-be', '>f2')]:
    a = np.load(f'{d}/{name}.npy')
    assert a.dtype == np.dtype(t), a.dtype
    assert np.array_equal(a.astype('<f2').view(np.uint16), bits), name
print('ok')
)") == "ok\n");
}
