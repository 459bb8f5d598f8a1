// zarr v2 with codecs, both ways with zarr-python 2.13 (python3-zarr, numcodecs):
// every compressor and filter it writes reads back in tessera, and every codec
// tessera writes reads back in zarr-python, values and metadata compared.
#include <doctest/doctest.h>

#include <cmath>
#include <filesystem>
#include <utility>

#include <absl/strings/str_cat.h>

#include "array/support.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

const char* const kSetup = R"(
import sys, os, zarr, numcodecs
from numcodecs import Blosc, Zstd, Zlib, GZip, LZ4, BZ2, LZMA, Delta, FixedScaleOffset
d = sys.argv[0].rsplit('/', 1)[0]
COMPRESSORS = {
    'blosc_lz4': Blosc('lz4', 5, Blosc.SHUFFLE), 'blosc_zstd': Blosc('zstd', 3, Blosc.BITSHUFFLE),
    'blosc_blosclz': Blosc('blosclz', 9, Blosc.NOSHUFFLE), 'blosc_lz4hc': Blosc('lz4hc', 4, Blosc.SHUFFLE),
    'blosc_zlib': Blosc('zlib', 1, Blosc.AUTOSHUFFLE), 'zstd': Zstd(5), 'zlib': Zlib(6), 'gzip': GZip(4),
    'lz4': LZ4(2), 'bz2': BZ2(7), 'lzma': LZMA(preset=3), 'lzma_alone': LZMA(format=2, preset=1),
}
)";

const char* const kCompressors[] = {"blosc_lz4", "blosc_zstd", "blosc_blosclz", "blosc_lz4hc", "blosc_zlib", "zstd",
                                    "zlib",      "gzip",       "lz4",           "bz2",         "lzma",       "lzma_alone"};

// The whole array through from_zarr's graph on two workers.
NDArray compute_all(const std::string& path) {
  return from_zarr(path).compute({.num_workers = 2});
}

}  // namespace

TEST_CASE("zarr v2: every compressor zarr-python writes reads back, in the graph, on two workers" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kSetup + R"(
for name, c in COMPRESSORS.items():
    for dtype in ['<f8', '<i2', '|u1', '<c8', '<f2']:
        z = zarr.open(f'{d}/{name}{dtype[1:]}', mode='w', shape=(9, 7), chunks=(4, 3), dtype=dtype, compressor=c)
        z[...] = pattern(dtype, (9, 7))
)");
  for (const char* name : kCompressors) {
    for (DType dtype : {DType::float64(), DType::int16(), DType::uint8(), DType::complex64(), DType::float16()}) {
      const std::string path = dir / (std::string(name) + dtype.str().substr(1));
      CAPTURE(path);
      zarr::Store z = zarr::open(path);
      CHECK(!z.raw());
      CHECK(array_equal(compute_all(path), pattern_array(dtype, {9, 7})));
    }
  }
}

TEST_CASE("zarr v2: compressed chunks bigger than a thread's kept scratch decode on two workers") {
  // A 5 MiB chunk's encoded bytes are read into a buffer of their own (a thread
  // keeps at most 4 MiB of scratch per use); that buffer must live until the
  // chunk is decoded, while the other worker allocates and fills its own.
  TempDir dir;
  const Shape shape = {8, int64_t{5} << 18};  // float32: chunks of 2 rows, 5 MiB each
  const NDArray all = pattern_array(DType::float32(), shape);
  for (const char* codec : {"blosc:lz4:5:shuffle", "zstd:1"}) {
    CAPTURE(codec);
    const std::string path = dir / codec;
    StoreOptions o;
    o.zarr.codec = codec;
    store(from_ndarray(all, {2, -1}), path, o);
    CHECK(!zarr::open(path).raw());
    for (int round = 0; round < 3; ++round) CHECK(array_equal(compute_all(path), all));
  }
}

TEST_CASE("zarr v2: order F, '/' separators, missing chunks and NaN fill with a compressor" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kSetup + R"(
z = zarr.open(f'{d}/f', mode='w', shape=(5, 6), chunks=(2, 4), dtype='<i4', compressor=Zstd(1), order='F')
z[...] = pattern('<i4', (5, 6))
z = zarr.open(f'{d}/nested', mode='w', shape=(5, 6), chunks=(2, 4), dtype='<f4', compressor=GZip(1),
              dimension_separator='/', fill_value=float('nan'))
z[0:2, 0:4] = 1.5
z = zarr.open(f'{d}/inf', mode='w', shape=(3,), chunks=(2,), dtype='<f8', compressor=LZ4(), fill_value=float('-inf'))
)");
  CHECK(array_equal(compute_all(dir / "f"), pattern_array(DType::int32(), {5, 6})));
  zarr::Store nested = zarr::open(dir / "nested");
  CHECK(nested.chunk_key({1, 1}) == "1/1");
  NDArray all = compute_all(dir / "nested");
  CHECK(all.at<float>({1, 3}) == 1.5f);
  CHECK(std::isnan(all.at<float>({4, 5})));
  CHECK(std::isinf(compute_all(dir / "inf").at<double>({2})));
}

TEST_CASE("zarr v2: delta and fixedscaleoffset filters zarr-python writes decode" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kSetup + R"(
z = zarr.open(f'{d}/delta', mode='w', shape=(50,), chunks=(16,), dtype='<i4', compressor=Zlib(1),
              filters=[Delta(dtype='<i4', astype='<i2')])
z[...] = np.arange(50, dtype='<i4') * 3 - 20
z = zarr.open(f'{d}/delta_f', mode='w', shape=(20,), chunks=(8,), dtype='<f8', compressor=None,
              filters=[Delta(dtype='<f8')])
z[...] = np.linspace(0, 1, 20)
z = zarr.open(f'{d}/fso', mode='w', shape=(30,), chunks=(7,), dtype='<f8', compressor=Blosc(),
              filters=[FixedScaleOffset(offset=10, scale=100, dtype='<f8', astype='<u2')])
z[...] = 10 + np.arange(30) / 100.0
z = zarr.open(f'{d}/fso16', mode='w', shape=(30,), chunks=(7,), dtype='<f2', compressor=None,
              filters=[FixedScaleOffset(offset=1, scale=10, dtype='<f2', astype='<i2')])
z[...] = np.linspace(-3, 5, 30).astype('<f2')
np.save(f'{d}/fso16.npy', z[...])
z = zarr.open(f'{d}/delta16', mode='w', shape=(20,), chunks=(8,), dtype='<f2', compressor=Zlib(1),
              filters=[Delta(dtype='<f2')])
z[...] = (np.arange(20) * 0.37).astype('<f2')
np.save(f'{d}/delta16.npy', z[...])  # numcodecs' float16 running sum rounds at each step, as tessera's
)");
  for (const char* name : {"fso16", "delta16"}) {
    CAPTURE(name);
    CHECK(array_equal(compute_all(dir / name), npy::open(dir / (std::string(name) + ".npy"))));
  }
  NDArray delta = compute_all(dir / "delta");
  for (int i = 0; i < 50; ++i) CHECK(delta.at<int32_t>({i}) == i * 3 - 20);
  NDArray delta_f = compute_all(dir / "delta_f");
  for (int i = 0; i < 20; ++i) CHECK(delta_f.at<double>({i}) == doctest::Approx(i / 19.0));
  NDArray fso = compute_all(dir / "fso");
  for (int i = 0; i < 30; ++i) CHECK(fso.at<double>({i}) == doctest::Approx(10 + i / 100.0));
  CHECK(zarr::open(dir / "fso").describe_codecs().at(1) ==
        "fixedscaleoffset(offset=10, scale=100, dtype=<f8, astype=<u2)");
}

TEST_CASE("zarr v2: big-endian arrays read into native order and write back big-endian" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kSetup + R"(
for dtype in ['>f8', '>i4', '>u2', '>c16', '>f2']:
    z = zarr.open(f'{d}/be{dtype[1:]}', mode='w', shape=(6, 5), chunks=(4, 2), dtype=dtype, compressor=Zstd(1) if dtype != '>u2' else None)
    z[...] = pattern(dtype, (6, 5))
)");
  for (DType dtype : {DType::float64(), DType::int32(), DType::uint16(), DType::complex128(), DType::float16()}) {
    const std::string path = dir / ("be" + dtype.str().substr(1));
    CAPTURE(path);
    zarr::Store z = zarr::open(path);
    CHECK(z.metadata().big_endian);
    CHECK(z.dtype() == dtype);
    CHECK(array_equal(compute_all(path), pattern_array(dtype, {6, 5})));
    // Written back in the store's own byte order.
    zarr::Store w(dir / ("copy" + dtype.str().substr(1)), z.metadata(), Access::ReadWrite);
    std::filesystem::create_directories(w.path());
    write_bytes(w.path() + "/.zarray", zarr::format_metadata(w.metadata()));
    w.write_chunk({0, 0}, pattern_array(dtype, {4, 2}));
  }
  CHECK(run_python(dir, std::string(kPythonPattern) + kSetup + R"(
for dtype in ['>f8', '>i4', '>u2', '>c16', '>f2']:
    z = zarr.open(f'{d}/copy{dtype[1:]}', mode='r')
    assert z.dtype == np.dtype(dtype), z.dtype
    assert np.array_equal(z[0:4, 0:2], pattern(dtype, (4, 2))), z[0:4, 0:2]
print('ok')
)") == "ok\n");
}

TEST_CASE("zarr v2: float16 both ways with zarr-python: fractions, NaN, infinities, fill values, both byte orders" *
          python_peer::needed()) {
  // Values that are not small integers (each rounded to float16 by numpy), so
  // a conversion through another precision, or bytes in the wrong order, shows.
  TempDir dir;
  run_python(dir, std::string(kSetup) + R"(
import numpy as np
v = (np.random.default_rng(3).normal(0, 300, (9, 7))).astype('<f2')
v[0, 0], v[1, 1], v[2, 2], v[3, 3] = np.nan, np.inf, -np.inf, 6e-8  # 6e-8: a subnormal
np.save(f'{d}/values.npy', v)
for name, dtype, c, fill in [('blosc', '<f2', Blosc('lz4', 5, Blosc.SHUFFLE), 0.1), ('zstd_be', '>f2', Zstd(3), float('nan')),
                             ('raw', '<f2', None, float('-inf')), ('bitshuffle_be', '>f2', Blosc('zstd', 3, Blosc.BITSHUFFLE), -2.5)]:
    z = zarr.open(f'{d}/{name}', mode='w', shape=(9, 7), chunks=(4, 3), dtype=dtype, compressor=c, fill_value=fill)
    z[0:8, :] = v[0:8, :]  # the last row's chunks are never written: they read as the fill value
)");
  const NDArray v = npy::open(dir / "values.npy");
  REQUIRE(v.dtype() == DType::float16());
  const std::pair<const char*, double> stores[] = {
      {"blosc", 0.0999755859375}, {"zstd_be", NAN}, {"raw", -INFINITY}, {"bitshuffle_be", -2.5}};
  for (const auto& store : stores) {
    const auto& [name, fill] = store;
    CAPTURE(store.first);
    const zarr::Store z = zarr::open(dir / name);
    CHECK(z.dtype() == DType::float16());
    CHECK(z.metadata().big_endian == (std::string(name).ends_with("_be")));
    REQUIRE(z.metadata().fill_value);
    CHECK(*z.metadata().fill_value == Scalar(fill));
    NDArray want = v.copy();
    want.slice({Slice{8, 9}, Slice::all()}).fill(Scalar(fill));
    CHECK(array_equal(compute_all(dir / name), want));
  }
  // And back: tessera's float16 in zarr-python, blosc told the element is 2 bytes.
  const Array x = from_ndarray(v, {{4, 4, 1}, {3, 3, 1}});
  store(x, dir / "w_blosc", {.compute = {.num_workers = 2}, .zarr = {.codec = "blosc:lz4:5:shuffle"}});
  store(x, dir / "w_zstd", {.compute = {.num_workers = 2}, .zarr = {.codec = "zstd:3"}});
  zarr::create(dir / "w_fill", DType::float16(), {3}, {2}, Scalar(Eigen::half(0.1f)));
  CHECK(run_python(dir, std::string(kSetup) + R"(
import numpy as np
v = np.load(f'{d}/values.npy')
for name in ['w_blosc', 'w_zstd']:
    z = zarr.open(f'{d}/{name}', mode='r')
    assert z.dtype == np.dtype('<f2'), z.dtype
    assert np.array_equal(z[...].view('<u2'), v.view('<u2')), (name, z[...])
raw = open(f'{d}/w_blosc/0.0', 'rb').read()
assert raw[3] == 2, raw[:16]  # blosc's header: the typesize byte
f = zarr.open(f'{d}/w_fill', mode='r')
assert f.fill_value == np.float16(0.1) and f.dtype == np.float16, f.fill_value
assert np.array_equal(f[...], np.full(3, 0.1, '<f2')), f[...]
print('ok')
)") == "ok\n");
}

TEST_CASE("zarr v2: every codec tessera writes reads back in zarr-python" *
          python_peer::needed()) {
  TempDir dir;
  const char* const specs[][2] = {
      {"blosc:lz4:5:shuffle", "Blosc(cname='lz4', clevel=5, shuffle=SHUFFLE, blocksize=0)"},
      {"blosc:zstd:5:bitshuffle", "Blosc(cname='zstd', clevel=5, shuffle=BITSHUFFLE, blocksize=0)"},
      {"blosc:blosclz:9:noshuffle", "Blosc(cname='blosclz', clevel=9, shuffle=NOSHUFFLE, blocksize=0)"},
      {"zstd:3", "Zstd(level=3)"},
      {"zlib:5", "Zlib(level=5)"},
      {"gzip:6", "GZip(level=6)"},
      {"lz4:1", "LZ4(acceleration=1)"},
      {"bz2:9", "BZ2(level=9)"},
      {"lzma:6", "LZMA(format=1, check=-1, preset=6, filters=None)"},
  };
  const NDArray values = pattern_array(DType::int32(), {9, 7});
  const Array x = from_ndarray(values, {{4, 4, 1}, {3, 3, 1}});
  std::string check = std::string(kPythonPattern) + kSetup + "from numcodecs.blosc import SHUFFLE, BITSHUFFLE, NOSHUFFLE\n";
  for (int i = 0; i < 9; ++i) {
    const std::string path = dir / absl::StrCat("w", i);
    store(x, path, {.compute = {.num_workers = 2}, .zarr = {.codec = specs[i][0]}});
    check += "z = zarr.open(f'{d}/w" + std::to_string(i) + "', mode='r')\n" +
             "assert np.array_equal(z[...], pattern('<i4', (9, 7))), z[...]\n" +
             "assert repr(z.compressor) == \"" + specs[i][1] + "\", repr(z.compressor)\n";
  }
  CHECK(run_python(dir, check + "print('ok')\n") == "ok\n");
}

TEST_CASE("zarr v2: filters tessera writes (delta, fixedscaleoffset) read back in zarr-python and in tessera" *
          python_peer::needed()) {
  TempDir dir;
  const NDArray ints = pattern_array(DType::int32(), {9, 7});
  const NDArray floats = pattern_array(DType::float64(), {9, 7});
  const ChunkSpec chunks({{4, 4, 1}, {3, 3, 1}});
  store(from_ndarray(ints, chunks), dir / "delta", {.zarr = {.codec = "zstd:1", .filters = {"delta:<i2"}}});
  store(from_ndarray(floats, chunks), dir / "fso",
        {.zarr = {.codec = "blosc:lz4:5:shuffle", .filters = {"fixedscaleoffset:10:4:<i2"}}});
  store(from_ndarray(ints, chunks), dir / "both",
        {.zarr = {.codec = "none", .filters = {"fixedscaleoffset:-3:2:<i8", "delta"}}});
  CHECK(array_equal(compute_all(dir / "delta"), ints));
  CHECK(array_equal(compute_all(dir / "fso"), floats));
  CHECK(array_equal(compute_all(dir / "both"), ints));
  CHECK(run_python(dir, std::string(kPythonPattern) + kSetup + R"(
z = zarr.open(f'{d}/delta', mode='r')
assert np.array_equal(z[...], pattern('<i4', (9, 7)))
assert repr(z.filters) == "[Delta(dtype='<i4', astype='<i2')]", repr(z.filters)
z = zarr.open(f'{d}/fso', mode='r')
assert np.array_equal(z[...], pattern('<f8', (9, 7)))
f, = z.filters
assert type(f) is FixedScaleOffset and f.offset == 10 and f.scale == 4 and f.astype == np.dtype('<i2'), repr(f)
z = zarr.open(f'{d}/both', mode='r')
assert np.array_equal(z[...], pattern('<i4', (9, 7)))
assert [type(f).__name__ for f in z.filters] == ['FixedScaleOffset', 'Delta'], repr(z.filters)
print('ok')
)") == "ok\n");
}

TEST_CASE("zarr v2: bad filter specs are refused before anything is written, naming what is accepted") {
  TempDir dir;
  auto create = [&](std::vector<std::string> filters, int format = 2) {
    zarr::create(dir / "z", DType::float64(), {4}, {2}, Scalar(0), {.zarr_format = format, .filters = std::move(filters)});
  };
  REQUIRE_THROWS_WITH_AS(create({"shuffle"}), doctest::Contains("unknown filter 'shuffle'; expected delta[:ASTYPE] or "
                                                                 "fixedscaleoffset:OFFSET:SCALE[:ASTYPE]"),
                         ValueError);
  REQUIRE_THROWS_WITH_AS(create({"fixedscaleoffset:1"}),
                         "codec fixedscaleoffset: expected fixedscaleoffset:OFFSET:SCALE[:ASTYPE]", ValueError);
  REQUIRE_THROWS_WITH_AS(create({"fixedscaleoffset:1:0"}), doctest::Contains("a non-zero SCALE, found '1:0'"),
                         ValueError);
  REQUIRE_THROWS_WITH_AS(create({"delta:<c8"}),
                         "codec delta: expected a little-endian integer or float type, found '<c8'", ValueError);
  REQUIRE_THROWS_WITH_AS(create({"delta:xyz"}), "codec delta: expected a numpy type such as <i2 or <f8, found 'xyz'",
                         ValueError);
  REQUIRE_THROWS_WITH_AS(create({"delta"}, 3), "filters (delta, fixedscaleoffset) are zarr v2's; zarr_format 3 has none",
                         ValueError);
  REQUIRE_THROWS_WITH_AS(zarr::create(dir / "c", DType::float64(), {4}, {2}, Scalar(0), {.codec = "delta"}),
                         doctest::Contains("codec 'delta' is a filter, not a compressor"), ValueError);
  CHECK(!std::filesystem::exists(dir / "z"));
}

TEST_CASE("zarr v2: arrays inside groups open by path, also through consolidated metadata" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kSetup + R"(
root = zarr.open_group(f'{d}/data.zarr', mode='w')
g = root.create_group('group')
v = g.create_dataset('var', shape=(4, 4), chunks=(2, 2), dtype='<i8')
v[...] = pattern('<i8', (4, 4))
root.create_dataset('top', shape=(3,), chunks=(3,), dtype='<f4')
g.create_group('sub').create_dataset('deep', shape=(2,), chunks=(1,), dtype='|u1')
zarr.consolidate_metadata(f'{d}/data.zarr')
import shutil
shutil.copytree(f'{d}/data.zarr', f'{d}/consolidated.zarr')
os.remove(f'{d}/consolidated.zarr/group/var/.zarray')
)");
  CHECK(array_equal(compute_all(dir / "data.zarr/group/var"), pattern_array(DType::int64(), {4, 4})));
  CHECK(array_equal(compute_all(dir / "consolidated.zarr/group/var"), pattern_array(DType::int64(), {4, 4})));
  CHECK(zarr::is_group(dir / "data.zarr"));
  std::vector<std::string> tree;
  for (const zarr::Node& n : zarr::walk(dir / "data.zarr")) tree.push_back(n.path + (n.is_group ? "/" : ""));
  CHECK(tree == std::vector<std::string>{"/", "group/", "group/sub/", "group/sub/deep", "group/var", "top"});
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "data.zarr/group"),
                         doctest::Contains("is a zarr group, not an array; expected a path to one of its arrays: sub/, "
                                           "sub/deep, var"),
                         StorageError);
}

TEST_CASE("zarr v2: unknown codecs are refused at open naming the codec and the path" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kSetup) + R"(
from numcodecs import Quantize, PackBits
zarr.open(f'{d}/quantize', mode='w', shape=(4,), chunks=(2,), dtype='<f8', filters=[Quantize(2, '<f8')])
zarr.open(f'{d}/packbits', mode='w', shape=(4,), chunks=(2,), dtype='|b1', compressor=PackBits())
zarr.open(f'{d}/raw', mode='w', shape=(4,), chunks=(2,), dtype='<f8', compressor=LZMA(format=3, filters=[dict(id=33)]))
)");
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "quantize"),
                         doctest::Contains("quantize/.zarray: unsupported zarr v2 codec 'quantize'"), StorageError);
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "packbits"),
                         doctest::Contains("packbits/.zarray: unsupported zarr v2 codec 'packbits'"), StorageError);
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "raw"), doctest::Contains("codec 'lzma': raw streams (format 3)"),
                         StorageError);
  REQUIRE_THROWS_WITH_AS(zarr::open(dir / "quantize"), doctest::Contains("supported: blosc, zstd"), StorageError);
}

// A chunk already laid out as stored goes to the compressor from its own memory;
// one that is not (strided, transposed) or that is a mapped file's bytes is copied
// first. Each way, the chunk read back is the one written, and the source is untouched.
TEST_CASE("zarr: chunks encode from their own memory or from a copy, each way the same values") {
  TempDir dir;
  const NDArray big = pattern_array(DType::int32(), {3, 4, 6});
  const NDArray before = big.copy();
  for (int format : {2, 3}) {
    for (const char* spec : {"zstd:3", "blosc:lz4:5:shuffle"}) {
      CAPTURE(format);
      CAPTURE(spec);
      const std::string path = dir / absl::StrCat("z", format, "-", spec);
      const zarr::Store z = zarr::create(path, DType::int32(), {2, 4, 3}, {1, 4, 3}, Scalar(0),
                                         {.zarr_format = format, .codec = spec});
      // In the stored layout, at an offset inside a bigger buffer (the middle plane of three).
      const NDArray planes = big.slice({Slice(), Slice(), Slice(0, 3)}).copy();
      const NDArray contiguous = planes.slice({Slice(1, 2), Slice(), Slice()});
      REQUIRE(contiguous.offset() != 0);
      z.write_chunk({0, 0, 0}, contiguous);
      CHECK(array_equal(z.read_chunk({0, 0, 0}), contiguous));
      // Strided (every other column): copied into the stored layout first.
      const NDArray strided = big.slice({Slice(2, 3), Slice(), Slice(0, 6, 2)});
      z.write_chunk({1, 0, 0}, strided);
      CHECK(array_equal(z.read_chunk({1, 0, 0}), strided));
      CHECK(array_equal(big, before));
    }
  }
  // A mapped file's chunk (a raw store's, mapped by read_chunk when big enough) is copied under the guard.
  const int64_t n = static_cast<int64_t>(zarr::Store::kMapChunkBytes / 4);
  const zarr::Store raw = zarr::create(dir / "raw", DType::int32(), {1, n}, {1, n});
  raw.write_chunk({0, 0}, pattern_array(DType::int32(), {1, n}));
  const NDArray mapped = zarr::open(dir / "raw").read_chunk({0, 0});
  REQUIRE(!mapped.writable());  // a read-only mapping of the file
  const zarr::Store packed = zarr::create(dir / "packed", DType::int32(), {1, n}, {1, n}, Scalar(0), {.codec = "zstd:1"});
  packed.write_chunk({0, 0}, mapped);
  CHECK(array_equal(packed.read_chunk({0, 0}), pattern_array(DType::int32(), {1, n})));
}

TEST_CASE("zarr v2: a corrupt or truncated compressed chunk is an error naming the chunk, never zeros") {
  TempDir dir;
  for (const char* spec : {"blosc:lz4:5:shuffle", "zstd:3", "zlib:1", "gzip:1", "lz4:1", "bz2:1", "lzma:1"}) {
    CAPTURE(spec);
    const std::string path = dir / (std::string("c-") + spec);
    store(from_ndarray(pattern_array(DType::float64(), {64}), {32}), path, {.zarr = {.codec = spec}});
    // Garbage of the right length, then half of the real chunk.
    std::string bytes;
    {
      std::ifstream in(path + "/1", std::ios::binary);
      bytes.assign(std::istreambuf_iterator<char>(in), {});
    }
    write_bytes(path + "/1", std::string(bytes.size(), '\x5a'));
    REQUIRE_THROWS_WITH_AS(zarr::open(path).read_chunk({1}),
                           doctest::Contains(("/1: chunk 1 of " + path + ": ").c_str()), StorageError);
    write_bytes(path + "/1", bytes.substr(0, bytes.size() / 2));
    REQUIRE_THROWS_WITH_AS(compute_all(path), doctest::Contains(("chunk 1 of " + path).c_str()), TaskError);
    CHECK(array_equal(zarr::open(path).read_chunk({0}), pattern_array(DType::float64(), {32})));
  }
}

TEST_CASE("zarr: hostile metadata (huge shapes, overflowing products, absurd chunk counts) is refused at open") {
  TempDir dir;
  auto fails_with = [&](const std::string& zarray, const std::string& message) {
    CAPTURE(zarray);
    std::filesystem::create_directories(dir / "h");
    write_bytes(dir / "h/.zarray", zarray);
    REQUIRE_THROWS_WITH_AS(zarr::open(dir / "h"), doctest::Contains(message.c_str()), StorageError);
    REQUIRE_THROWS_WITH_AS(from_zarr(dir / "h"), doctest::Contains((dir / "h/.zarray").c_str()), StorageError);
  };
  const std::string head = R"({"zarr_format": 2, "dtype": "<f8", "order": "C", "fill_value": 0, "compressor": null, )";
  fails_with(head + R"("shape": [1099511627776, 1099511627776], "chunks": [1024, 1024]})",
             "shape (1099511627776, 1099511627776) of float64 holds more than 2^62 bytes");
  fails_with(head + R"("shape": [1000000000000000], "chunks": [1]})",
             "makes more chunks than tessera handles (at most 2^31 chunks, 2^24 along all axes together)");
  fails_with(head + R"("shape": [100000, 100000, 100000], "chunks": [10, 10, 10]})", "makes more chunks");
  fails_with(head + R"("shape": [2, 2], "chunks": [4611686018427387904, 4611686018427387904]})",
             "chunk shape (4611686018427387904, 4611686018427387904) of float64 holds more than 2^62 bytes");
  fails_with(head + R"("shape": [18446744073709551615], "chunks": [1]})", "expected \"shape\" to hold non-negative");
}
