#include <doctest/doctest.h>

#include <sys/resource.h>

#include <csignal>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "array/support.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/graph/error.hpp"
#include "python_peer.hpp"

using namespace tessera;
using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

// The whole array, block by block, through read_chunk.
NDArray read_all(const zarr::Store& z) {
  NDArray out = NDArray::empty(z.dtype(), z.shape());
  const Chunks& c = z.chunks();
  std::vector<int64_t> block(c.ndim(), 0);
  for (int64_t n = 0; n < c.total_blocks(); ++n) {
    int64_t rest = n;
    for (size_t a = c.ndim(); a-- > 0;) {
      block[a] = rest % c.numblocks(a);
      rest /= c.numblocks(a);
    }
    std::vector<Slice> where;
    for (size_t a = 0; a < c.ndim(); ++a) where.emplace_back(c.offsets(a)[block[a]], c.offsets(a)[block[a] + 1]);
    out.slice(where).assign(z.read_chunk(block));
  }
  return out;
}

// The whole array, block by block, each decoded into its place by read_into.
NDArray read_all_into(const zarr::Store& z) {
  NDArray out = NDArray::empty(z.dtype(), z.shape());
  const Chunks& c = z.chunks();
  for_each_block(c, [&](std::span<const int64_t> idx) {
    const std::vector<int64_t> block(idx.begin(), idx.end());
    std::vector<Slice> where;
    for (size_t a = 0; a < c.ndim(); ++a) where.emplace_back(c.offsets(a)[block[a]], c.offsets(a)[block[a] + 1]);
    z.read_into(block, out.slice(where));
  });
  return out;
}

const char* const kNames = R"(
NAMES = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
         'float16', 'float32', 'float64', 'complex64', 'complex128']
import sys, os, zarr
d = sys.argv[0].rsplit('/', 1)[0]
)";

}  // namespace

TEST_CASE("zarr: arrays python3-zarr writes read chunk by chunk, edge chunks trimmed, missing ones filled" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kNames + R"(
for name in NAMES:
    z = zarr.open(f'{d}/{name}', mode='w', shape=(7, 5), chunks=(3, 2), dtype=name, compressor=None)
    z[...] = pattern(name, (7, 5))
z = zarr.open(f'{d}/holes', mode='w', shape=(7, 5), chunks=(3, 2), dtype='<f8', compressor=None, fill_value=-1.5)
z[...] = pattern('<f8', (7, 5))
os.remove(f'{d}/holes/1.1')
z = zarr.open(f'{d}/nested', mode='w', shape=(4, 4), chunks=(3, 3), dtype='<i2', compressor=None,
              dimension_separator='/')
z[...] = pattern('<i2', (4, 4))
z = zarr.open(f'{d}/fortran', mode='w', shape=(5, 4), chunks=(2, 3), dtype='<u4', compressor=None, order='F')
z[...] = pattern('<u4', (5, 4))
z = zarr.open(f'{d}/nan', mode='w', shape=(3,), chunks=(2,), dtype='<f4', compressor=None, fill_value=float('nan'))
z = zarr.open(f'{d}/scalar', mode='w', shape=(), dtype='<c16', compressor=None)
z[...] = 3 - 4j
)");
  for (int i = 0; i < DType::count; ++i) {
    const DType dtype = static_cast<DType::Id>(i);
    CAPTURE(dtype.name());
    zarr::Store z = zarr::open(dir / dtype.name());
    CHECK(z.dtype() == dtype);
    CHECK(z.chunks() == Chunks({{3, 3, 1}, {2, 2, 1}}));
    CHECK(z.read_chunk({2, 2}).shape() == Shape{1, 1});
    CHECK(array_equal(read_all(z), pattern_array(dtype, {7, 5})));
    CHECK(array_equal(read_all_into(z), pattern_array(dtype, {7, 5})));
  }
  zarr::Store holes = zarr::open(dir / "holes");
  CHECK(!holes.has_chunk({1, 1}));
  CHECK(holes.metadata().fill_value == Scalar(-1.5));
  NDArray expected = pattern_array(DType::float64(), {7, 5});
  expected.slice({Slice{3, 6}, Slice{2, 4}}).fill(-1.5);
  CHECK(array_equal(read_all(holes), expected));
  CHECK(array_equal(read_all_into(holes), expected));
  CHECK(holes.chunk_key({1, 1}) == "1.1");

  zarr::Store nested = zarr::open(dir / "nested");
  CHECK(nested.chunk_key({1, 0}) == "1/0");
  CHECK(array_equal(read_all(nested), pattern_array(DType::int16(), {4, 4})));
  zarr::Store fortran = zarr::open(dir / "fortran");
  CHECK(fortran.read_chunk({0, 0}).is_f_contiguous());
  CHECK(array_equal(read_all(fortran), pattern_array(DType::uint32(), {5, 4})));
  CHECK(array_equal(read_all_into(fortran), pattern_array(DType::uint32(), {5, 4})));
  zarr::Store nan = zarr::open(dir / "nan");
  CHECK(std::isnan(nan.read_chunk({1}).at<float>({0})));
  zarr::Store scalar = zarr::open(dir / "scalar");
  CHECK(scalar.chunk_key({}) == "0");
  CHECK(scalar.read_chunk({}).at<std::complex<double>>({}) == std::complex<double>(3, -4));
}

TEST_CASE("zarr: large raw chunks are read as views of the mapped file, small ones into memory") {
  TempDir dir;
  const int64_t side = 1024;  // uint8 1024 x 1024: kMapChunkBytes exactly
  static_assert(zarr::Store::kMapChunkBytes == size_t{1} << 20);
  zarr::Store big = zarr::create(dir / "big", DType::uint8(), {side, side + 5}, {side, side});
  zarr::Store small = zarr::create(dir / "small", DType::uint8(), {8, 13}, {8, 8});
  for (zarr::Store* z : {&big, &small}) {
    const NDArray all = pattern_array(DType::uint8(), z->shape());
    const int64_t width = z->chunk_shape()[1];
    z->write_chunk({0, 0}, all.slice({Slice{0, z->shape()[0]}, Slice{0, width}}));
    z->write_chunk({0, 1}, all.slice({Slice{0, z->shape()[0]}, Slice{width, z->shape()[1]}}));
    const zarr::Store reader = zarr::open(z->path());
    CHECK(array_equal(read_all(reader), all));
    CHECK(array_equal(read_all_into(reader), all));
  }
  CHECK(!zarr::open(big.path()).read_chunk({0, 0}).writable());  // a read-only mapping
  CHECK(zarr::open(small.path()).read_chunk({0, 0}).writable());  // fresh memory
}

TEST_CASE("zarr: compute() decodes each chunk into its place, the same values as the blocks' tasks") {
  TempDir dir;
  const NDArray all = pattern_array(DType::float32(), {37, 21, 10});
  const std::vector<zarr::Format> formats = {{}, {.codec = "blosc:lz4:5:shuffle"}, {.zarr_format = 3, .codec = "zstd:3"},
                                             {.zarr_format = 3, .codec = "gzip:1", .inner_chunks = {4, 4, 5}}};
  int n = 0;
  for (const zarr::Format& f : formats) {
    const std::string path = dir / std::to_string(n++);
    zarr::Store z = zarr::create(path, DType::float32(), all.shape(), {8, 8, 10}, Scalar(-3), f);
    const Chunks& c = z.chunks();
    for_each_block(c, [&](std::span<const int64_t> idx) {
      if (idx[0] == 1 && idx[1] == 1) return;  // never written: the fill value
      std::vector<Slice> where;
      for (size_t a = 0; a < c.ndim(); ++a) where.emplace_back(c.offsets(a)[idx[a]], c.offsets(a)[idx[a] + 1]);
      z.write_chunk({idx.begin(), idx.end()}, all.slice(where));
    });
    NDArray expected = all.copy();
    expected.slice({Slice{8, 16}, Slice{8, 16}, Slice{0, 10}}).fill(-3);
    const Array x = from_zarr(path);
    CHECK(array_equal(x.compute({.num_workers = 2}), expected));             // filled in place
    CHECK(array_equal((x * 1.0f).compute({.num_workers = 2}), expected));    // blocks made by tasks
    // Blocks of several chunks each, whole (16, 21, 10) or cutting chunks (13, 21, 7).
    for (const ChunkSpec& blocks : {ChunkSpec({16, -1, 10}), ChunkSpec({13, 21, 7})}) {
      const Array y = from_zarr(path, blocks);
      CHECK(y.chunks() == normalize_chunks(blocks, all.shape(), DType::float32()));
      CHECK(array_equal(y.compute({.num_workers = 2}), expected));
      CHECK(array_equal((y * 1.0f).compute({.num_workers = 2}), expected));
    }
  }
}

TEST_CASE("zarr: read_into refuses a target of the wrong shape or dtype") {
  TempDir dir;
  zarr::Store z = zarr::create(dir / "z", DType::int16(), {5, 3}, {2, 2});
  REQUIRE_THROWS_WITH_AS(z.read_into({2, 1}, NDArray::empty(DType::int16(), {2, 2})),
                         doctest::Contains("expected a writable int16 array of shape (1, 1) to read into, found a "
                                           "int16 array of shape (2, 2)"),
                         Error);
  REQUIRE_THROWS_WITH_AS(z.read_into({0, 0}, NDArray::empty(DType::int32(), {2, 2})),
                         doctest::Contains("found a int32 array of shape (2, 2)"), Error);
}

TEST_CASE("zarr: a chunk that cannot be written is an error naming its temporary file; none is left, no chunk appears") {
  TempDir dir;
  zarr::Store z = zarr::create(dir / "z", DType::float64(), {64, 64}, {64, 64}, Scalar(0), {.codec = "zstd:1"});
  // Files may grow to 16 bytes only: the write fails with EFBIG (SIGXFSZ ignored).
  struct rlimit old {};
  ::getrlimit(RLIMIT_FSIZE, &old);
  const auto previous = std::signal(SIGXFSZ, SIG_IGN);
  struct rlimit small = old;
  small.rlim_cur = 16;
  ::setrlimit(RLIMIT_FSIZE, &small);
  auto write = [&] { z.write_chunk({0, 0}, pattern_array(DType::float64(), {64, 64})); };
  CHECK_THROWS_WITH_AS(write(), doctest::Contains("cannot write the chunk"), StorageError);
  ::setrlimit(RLIMIT_FSIZE, &old);
  std::signal(SIGXFSZ, previous);
  CHECK(!z.has_chunk({0, 0}));
  int files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir / "z")) files += e.path().filename() != ".zarray";
  CHECK(files == 0);
}

TEST_CASE("zarr: arrays tessera creates read in python3-zarr" * python_peer::needed()) {
  TempDir dir;
  for (int i = 0; i < DType::count; ++i) {
    const DType dtype = static_cast<DType::Id>(i);
    zarr::Store z = zarr::create(dir / dtype.name(), dtype, {7, 5}, {3, 2});
    NDArray all = pattern_array(dtype, {7, 5});
    const Chunks& c = z.chunks();
    for (int64_t bi = 0; bi < c.numblocks(0); ++bi) {
      for (int64_t bj = 0; bj < c.numblocks(1); ++bj) {
        NDArray part = all.slice({Slice{c.offsets(0)[bi], c.offsets(0)[bi + 1]},
                                  Slice{c.offsets(1)[bj], c.offsets(1)[bj + 1]}});
        if ((bi + bj) % 2 == 0) z.write_chunk({bi, bj}, part);
        else z.map_chunk({bi, bj}).assign(part);  // straight into the mapped chunk file
      }
    }
  }
  // Edge chunks are padded with the fill value; a chunk never written reads as it.
  zarr::Store f = zarr::create(dir / "fill", DType::int32(), {5, 3}, {2, 2}, -7);
  f.write_chunk({2, 1}, NDArray::full(DType::int32(), {1, 1}, 9));
  f.map_chunk({0, 1}).fill(4);
  zarr::create(dir / "nofill", DType::float64(), {2}, {2}, std::nullopt);
  zarr::create(dir / "nanfill", DType::complex64(), {2}, {2}, std::complex<double>(NAN, -INFINITY));
  std::string out = run_python(dir, std::string(kPythonPattern) + kNames + R"(
for name in NAMES:
    z = zarr.open(f'{d}/{name}', mode='r')
    assert z.dtype == np.dtype(name) and z.chunks == (3, 2) and z.compressor is None, name
    assert np.array_equal(z[...], pattern(name, (7, 5))), (name, z[...])
f = zarr.open(f'{d}/fill', mode='r')
assert f.fill_value == -7
e = np.full((5, 3), -7, dtype='<i4'); e[4, 2] = 9; e[0:2, 2] = 4
assert np.array_equal(f[...], e), f[...]
raw = np.fromfile(f'{d}/fill/2.1', dtype='<i4').reshape(2, 2)
assert np.array_equal(raw, [[9, -7], [-7, -7]]), raw
assert zarr.open(f'{d}/nofill', mode='r').fill_value is None
c = zarr.open(f'{d}/nanfill', mode='r').fill_value
assert np.isnan(c.real) and c.imag == -np.inf, c
print('ok')
)");
  CHECK(out == "ok\n");
}

TEST_CASE("zarr: bad metadata, wrong chunk sizes and misuse give clear errors") {
  TempDir dir;
  zarr::Metadata m;
  m.shape = {4, 3};
  m.chunk_shape = {2, 2};
  m.dtype = DType::int16();
  m.fill_value = Scalar(0);
  const std::string good = zarr::format_metadata(m);
  auto fails_with = [&](const std::string& text, const std::string& message) {
    CAPTURE(text);
    std::filesystem::create_directories(dir / "bad");
    write_bytes(dir / "bad/.zarray", text);
    REQUIRE_THROWS_WITH_AS(zarr::open(dir / "bad"), doctest::Contains(message.c_str()), StorageError);
  };
  auto with = [&](const char* key, const std::string& value) {
    auto meta = nlohmann::json::parse(good);
    if (value.empty()) meta.erase(key);
    else meta[key] = nlohmann::json::parse(value);
    return meta.dump();
  };
  fails_with("", "expected JSON");
  fails_with("{\"zarr_format\": 2,", "expected JSON");
  fails_with("[2]", "expected a JSON object");
  fails_with(with("zarr_format", "3"), "expected zarr_format 2, found 3");
  fails_with(with("shape", ""), "expected the key \"shape\"");
  fails_with(with("shape", "[4, -3]"), "expected \"shape\" to hold non-negative integers");
  fails_with(with("shape", "\"big\""), "expected \"shape\" to be a list of integers");
  fails_with(with("chunks", "[2, 0]"), "expected \"chunks\" to hold positive integers");
  fails_with(with("chunks", "[2]"), "expected one chunk size per axis of shape (4, 3), found chunks (2,)");
  fails_with(with("chunks", "[4294967296, 4294967296]"), "chunk shape (4294967296, 4294967296) of int16 holds more than 2^62 bytes");
  fails_with(with("dtype", "\"<U4\""), "unknown dtype '<U4'");
  fails_with(with("dtype", "[[\"a\", \"<f8\"]]"), "expected \"dtype\" to be a type string");
  fails_with(with("order", "\"K\""), "expected order \"C\" or \"F\"");
  fails_with(with("fill_value", "\"x\""), "expected a int16 fill_value, found \"x\"");
  fails_with(with("fill_value", "70000"), "cannot be represented as int16");
  fails_with(with("dimension_separator", "\"-\""), "expected dimension_separator");
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "none"), doctest::Contains("none: no zarr array here: expected .zarray (zarr v2) or zarr.json (zarr v3)"), StorageError);

  zarr::Store z = zarr::create(dir / "z", DType::int16(), {4, 3}, {2, 2});
  write_bytes(dir / "z/1.0", std::string(7, 'x'));
  REQUIRE_THROWS_WITH_AS(z.read_chunk({1, 0}),
                         doctest::Contains("expected an uncompressed chunk of 8 bytes (int16 (2, 2)), found 7 bytes"),
                         StorageError);
  REQUIRE_THROWS_WITH_AS(z.read_chunk({2, 0}), doctest::Contains("the axis has 2 blocks"), ChunkError);
  REQUIRE_THROWS_WITH_AS(z.write_chunk({1, 1}, NDArray::zeros(DType::int16(), {2, 2})),
                         doctest::Contains("expected a int16 array of shape (2, 1), found a int16 array of shape (2, 2)"),
                         Error);
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "z").map_chunk({0, 0}), doctest::Contains("opened read-only"), StorageError);
  REQUIRE_THROWS_WITH_AS(zarr::create(dir / "z", DType::int16(), {4, 3}, {2, 2}), doctest::Contains("exists here already"),
                         StorageError);
  REQUIRE_THROWS_WITH_AS(zarr::create(dir / "c", DType::int16(), {4, 3}, {2, 0}),
                         "zarr chunks (2, 0): expected positive sizes, found 0 for axis 1", ChunkError);
  REQUIRE_THROWS_AS(zarr::create(dir / "u", DType::uint8(), {4}, {2}, -1), TypeError);
}
