// HDF5 and NetCDF-4: files h5py and netCDF4-python write, read by tessera with
// the same values; what tessera writes, read back by h5py, netCDF4 and xarray;
// the files tessera refuses, each with its message.
#include <doctest/doctest.h>

#include <filesystem>
#include <fstream>

#include "array/io/hdf5/filters.hpp"
#include "array/support.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/graph/error.hpp"
#include "python_peer.hpp"

using namespace tessera;
using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

const char* const kH5pySetup = R"(
import sys, os, struct
import h5py
d = sys.argv[0].rsplit('/', 1)[0]
NAMES = ['bool', 'int8', 'int16', 'int32', 'int64', 'uint8', 'uint16', 'uint32', 'uint64',
         'float16', 'float32', 'float64', 'complex64', 'complex128']
)";

// The whole dataset, block by block, through read_chunk.
NDArray read_dataset(const hdf5::Dataset& d) {
  NDArray out = NDArray::empty(d.metadata().dtype, d.metadata().shape);
  const Chunks& c = d.chunks();
  for_each_block(c, [&](std::span<const int64_t> idx) {
    const std::vector<int64_t> block(idx.begin(), idx.end());
    std::vector<Slice> where;
    for (size_t a = 0; a < c.ndim(); ++a) where.emplace_back(c.offsets(a)[block[a]], c.offsets(a)[block[a] + 1]);
    out.slice(where).assign(d.read_chunk(block));
  });
  return out;
}

std::string h5_message(const std::function<void()>& f) {
  try {
    f();
  } catch (const std::exception& e) {
    return e.what();
  }
  FAIL("expected an error");
  return "";
}

// True when `f` throws an error whose message holds `text`.
bool h5_says(const std::function<void()>& f, const std::string& text) {
  const std::string m = h5_message(f);
  INFO("the message: " << m);
  return m.find(text) != std::string::npos;
}

}  // namespace

TEST_CASE("hdf5: every dtype h5py writes, both byte orders, filtered or not, edge chunks trimmed" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kH5pySetup + R"(
with h5py.File(f'{d}/all.h5', 'w') as f:
    for name in NAMES:
        for order in '<>':
            dt = np.dtype(name).newbyteorder(order)
            a = pattern(name, (7, 5)).astype(dt)
            f.create_dataset(f'plain/{name}{order}', data=a, chunks=(3, 2))
            f.create_dataset(f'deflate/{name}{order}', data=a, chunks=(3, 2), compression='gzip', shuffle=True,
                             fletcher32=True)
            f.create_dataset(f'lzf/{name}{order}', data=a, chunks=(3, 2), compression='lzf')
)");
  for (int i = 0; i < DType::count; ++i) {
    const DType dtype = static_cast<DType::Id>(i);
    for (const char* group : {"plain", "deflate", "lzf"}) {
      for (const char* order : {"<", ">"}) {
        const std::string name = std::string("/") + group + "/" + dtype.name() + order;
        CAPTURE(name);
        hdf5::Dataset d = hdf5::open(dir / "all.h5", name);
        CHECK(d.metadata().dtype == dtype);
        CHECK(d.metadata().big_endian == (order[0] == '>' && dtype.itemsize() > 1 && dtype != DType::bool_()));
        CHECK(d.parallel());
        CHECK(d.chunks() == Chunks({{3, 3, 1}, {2, 2, 1}}));
        CHECK(d.read_chunk({2, 2}).shape() == Shape{1, 1});
        CHECK(array_equal(read_dataset(d), pattern_array(dtype, {7, 5})));
      }
    }
  }
  const Array x = from_hdf5(dir / "all.h5", "deflate/float64<");
  CHECK(array_equal(x.compute({.num_workers = 2}), pattern_array(DType::float64(), {7, 5})));
  CHECK(array_equal(from_hdf5(dir / "all.h5", "/plain/int32>", {4, -1}).compute(),
                    pattern_array(DType::int32(), {7, 5})));
}

TEST_CASE("hdf5: unwritten chunks read as the fill value; 0-d, 1-d, contiguous and nested datasets" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kH5pySetup + R"(
with h5py.File(f'{d}/f.h5', 'w') as f:
    h = f.create_dataset('holes', shape=(7, 5), chunks=(3, 2), dtype='<f8', fillvalue=-1.5, compression='gzip')
    h[0:3, :] = pattern('<f8', (7, 5))[0:3, :]
    f.create_dataset('scalar', data=np.complex128(3 - 4j))
    f.create_dataset('line', data=pattern('<i2', (11,)), chunks=(4,))
    f.create_dataset('contiguous', data=pattern('>u4', (6, 3)))
    f.create_dataset('a/b/c/deep', data=pattern('<f4', (2, 2)), chunks=(1, 2), shuffle=True)
    f.create_dataset('empty', shape=(0, 3), maxshape=(None, 3), dtype='<f4', chunks=(2, 3))
)");
  hdf5::Dataset holes = hdf5::open(dir / "f.h5", "holes");
  REQUIRE(holes.metadata().fill_value.has_value());
  CHECK(*holes.metadata().fill_value == Scalar(-1.5));
  NDArray expected = pattern_array(DType::float64(), {7, 5});
  expected.slice({Slice{3, 7}, Slice{}}).fill(-1.5);
  CHECK(array_equal(read_dataset(holes), expected));
  hdf5::Dataset scalar = hdf5::open(dir / "f.h5", "/scalar");
  CHECK(scalar.metadata().shape == Shape{});
  CHECK(from_hdf5(dir / "f.h5", "scalar").compute().at<std::complex<double>>({}) == std::complex<double>(3, -4));
  CHECK(array_equal(from_hdf5(dir / "f.h5", "line").compute(), pattern_array(DType::int16(), {11})));
  hdf5::Dataset contiguous = hdf5::open(dir / "f.h5", "contiguous");
  CHECK(contiguous.metadata().layout == "contiguous");
  CHECK(array_equal(read_dataset(contiguous), pattern_array(DType::uint32(), {6, 3})));
  CHECK(array_equal(from_hdf5(dir / "f.h5", "a/b/c/deep").compute(), pattern_array(DType::float32(), {2, 2})));
  CHECK(from_hdf5(dir / "f.h5", "empty").compute().shape() == Shape{0, 3});
}

TEST_CASE("hdf5: a filter tessera does not decode is read through libhdf5 (H5Dread), and says so" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kH5pySetup + R"(
with h5py.File(f'{d}/f.h5', 'w') as f:
    f.create_dataset('so', data=pattern('<i4', (9, 4)), chunks=(4, 4), scaleoffset=0)
)");
  hdf5::Dataset d = hdf5::open(dir / "f.h5", "so");
  CHECK(!d.parallel());
  REQUIRE(d.metadata().filters.size() == 1);
  CHECK(d.metadata().filters[0].name == "scaleoffset");
  CHECK(!d.metadata().filters[0].decoded_by_tessera);
  CHECK(array_equal(from_hdf5(dir / "f.h5", "so").compute({.num_workers = 2}), pattern_array(DType::int32(), {9, 4})));
}

TEST_CASE("hdf5: NetCDF-4 variables netCDF4-python writes, with their dimension names and _FillValue" *
          python_peer::needed()) {
  TempDir dir;
  run_python(dir, std::string(kPythonPattern) + kH5pySetup + R"(
import netCDF4
with netCDF4.Dataset(f'{d}/f.nc', 'w') as n:
    n.createDimension('time', None)
    n.createDimension('lat', 5)
    g = n.createGroup('ocean')
    v = g.createVariable('temp', 'f4', ('time', 'lat'), zlib=True, fill_value=-999.0, chunksizes=(2, 5))
    v.scale_factor = 0.5
    v.add_offset = 10.0
    v.units = 'degC'
    v.set_auto_maskandscale(False)
    v[0:3, :] = pattern('<f4', (3, 5))
    lat = n.createVariable('lat', 'f8', ('lat',))
    lat[:] = np.arange(5.0)
)");
  hdf5::Dataset d = hdf5::open(dir / "f.nc", "ocean/temp");
  CHECK(d.metadata().dimension_names == std::vector<std::string>{"time", "lat"});
  CHECK(*d.metadata().fill_value == Scalar(-999.0f));
  bool scale = false, offset = false, units = false;
  for (const hdf5::Attribute& a : d.metadata().attributes) {
    scale = scale || (a.name == "scale_factor" && a.value == "0.5");
    offset = offset || (a.name == "add_offset" && a.value == "10");
    units = units || (a.name == "units" && a.value == "\"degC\"");
  }
  CHECK(scale);
  CHECK(offset);
  CHECK(units);
  CHECK(array_equal(from_netcdf(dir / "f.nc", "ocean/temp").compute(), pattern_array(DType::float32(), {3, 5})));
  CHECK(array_equal(from_netcdf(dir / "f.nc", "lat").compute(),
                    NDArray::from_vector(std::vector<double>{0, 1, 2, 3, 4}, {5})));
  CHECK(h5_says([&] { (void)from_netcdf(dir / "f.nc", "time"); }, "is a dimension without values"));
}

TEST_CASE("hdf5: missing datasets name what the file holds; other types, unknown filters and broken files refused" *
          python_peer::needed()) {
  TempDir dir;
  const std::string out = run_python(dir, std::string(kPythonPattern) + kH5pySetup + R"(
with h5py.File(f'{d}/f.h5', 'w') as f:
    f.create_dataset('g/x', data=np.arange(4.0))
    f.create_dataset('words', data=np.array([b'ab', b'cd']))
    f.create_dataset('pairs', data=np.zeros(3, dtype=[('a', '<i4'), ('b', '<f8')]))
    f.create_dataset('ragged', shape=(2,), dtype=h5py.vlen_dtype(np.int32))
    u = f.create_dataset('unknown', shape=(4,), chunks=(4,), dtype='<i4', compression=32017, allow_unknown_filter=True)
    u.id.write_direct_chunk((0,), b'0123456789')
    f.create_dataset('vast', shape=(2**40,), chunks=(1,), dtype='<u1')
    big = f.create_dataset('big', data=pattern('<i4', (64,)), chunks=(64,))
    info = big.id.get_chunk_info(0)
    print(info.byte_offset, info.size)
open(f'{d}/not.h5', 'wb').write(b'this is not an HDF5 file' * 10)
raw = open(f'{d}/f.h5', 'rb').read()
open(f'{d}/truncated.h5', 'wb').write(raw[:len(raw) // 2])
)");
  const std::string f = dir / "f.h5";
  CHECK(h5_message([&] { (void)hdf5::open(f, "nope"); }) ==
        f + ": no dataset /nope in the file; it holds: /big (dataset), /g (group), /g/x (dataset), /pairs (dataset), "
            "/ragged (dataset), /unknown (dataset), /vast (dataset), /words (dataset)");
  CHECK(h5_message([&] { (void)hdf5::open(f, "vast"); }) ==
        f + ": dataset /vast: shape (1099511627776,) in chunks of (1,) makes more chunks than tessera handles (at most "
            "2^31 chunks, 2^24 along all axes together)");
  CHECK(h5_says([&] { (void)hdf5::open(f, "g"); }, "no dataset /g (it is a group)"));
  CHECK(h5_says([&] { (void)hdf5::open(f, "words"); },
                "expected a numeric type (integer, float, complex, bool), found a string type: H5T_STRING"));
  CHECK(h5_says([&] { (void)hdf5::open(f, "pairs"); }, "found a compound type: H5T_COMPOUND"));
  CHECK(h5_says([&] { (void)hdf5::open(f, "ragged"); }, "found a variable-length type"));
  CHECK(h5_message([&] { (void)hdf5::open(f, "unknown"); }) ==
        f + ": dataset /unknown uses the filter 32017 filter, which neither tessera nor libhdf5 (no plugin for it) "
            "decodes");
  CHECK(h5_says([&] { (void)hdf5::open(dir / "not.h5", "x"); }, dir / "not.h5" + ": cannot open as an HDF5 file"));
  CHECK(h5_says([&] { (void)hdf5::open(dir / "truncated.h5", "g/x"); }, dir / "truncated.h5" + ": cannot open"));
  CHECK(h5_says([&] { (void)hdf5::open(dir / "missing.h5", "x"); }, "missing.h5"));

  // The chunk's declared size patched past the end of the file (its entry in the v1 B-tree:
  // size, filter mask, offsets, then the chunk's address).
  std::istringstream fields(out);
  uint64_t address = 0, size = 0;
  fields >> address >> size;
  std::string bytes;
  {
    std::ifstream in(f, std::ios::binary);
    bytes.assign(std::istreambuf_iterator<char>(in), {});
  }
  auto le = [](uint64_t v, int n) {
    std::string s;
    for (int k = 0; k < n; ++k) s.push_back(k < 8 ? static_cast<char>(v >> (8 * k)) : '\0');  // 64-bit v
    return s;
  };
  const std::string key = le(size, 4) + le(0, 4) + le(0, 16) + le(address, 8);
  const size_t at = bytes.find(key);
  REQUIRE(at != std::string::npos);
  bytes.replace(at, 4, le(0x7fff0000, 4));
  write_bytes(dir / "patched.h5", bytes);
  hdf5::Dataset patched = hdf5::open(dir / "patched.h5", "big");
  CHECK(h5_message([&] { (void)patched.read_chunk({0}); }) ==
        dir / "patched.h5" + ": chunk (0) of dataset /big: its 2147418112 bytes at offset " + std::to_string(address) +
            " end past the file's " + std::to_string(bytes.size()) + " bytes");
}

TEST_CASE("hdf5: the filters tessera decodes refuse bytes they did not make") {
  using hdf5::detail::FilterStep;
  using hdf5::detail::Pipeline;
  const Pipeline deflate({{1, {4}, ""}}, 64, 4);
  std::vector<std::byte> garbage(16, std::byte{7}), out(64);
  CHECK(h5_message([&] { deflate.decode(garbage, 0, out); }) ==
        "deflate: zlib: corrupt stream (incorrect header check)");
  std::vector<std::byte> too_big(deflate.max_stored_size() + 1);
  CHECK(h5_says([&] { deflate.decode(too_big, 0, out); }, "more than the"));
  const Pipeline sum({{3, {}, ""}}, 64, 4);
  std::vector<std::byte> chunk(68, std::byte{1});
  CHECK(h5_message([&] { sum.decode(chunk, 0, out); }).find("fletcher32: checksum mismatch") == 0);
  const Pipeline lzf({{32000, {}, ""}}, 64, 4);
  std::vector<std::byte> back_ref{std::byte{0xE0}, std::byte{0x10}, std::byte{0x00}};
  CHECK(h5_message([&] { lzf.decode(back_ref, 0, out); }).find("lzf: corrupt stream") == 0);
  // Encoded by tessera, decoded by tessera: shuffle + deflate + fletcher32.
  const Pipeline all({{2, {4}, ""}, {1, {6}, ""}, {3, {}, ""}}, 64, 4);
  std::vector<std::byte> in(64);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<std::byte>(i * 7);
  all.decode(all.encode(in), 0, out);
  CHECK(out == in);
  // A chunk whose mask skips the deflate (an optional filter that did not pay).
  const std::span<const std::byte> view = Pipeline({{2, {4}, ""}, {3, {}, ""}}, 64, 4).encode(in);
  const std::vector<std::byte> shuffled(view.begin(), view.end());
  all.decode(shuffled, 0b010, out);
  CHECK(out == in);
}

TEST_CASE("hdf5: what store writes (.h5 and NetCDF-4 .nc) reads back in h5py, netCDF4 and xarray" *
          python_peer::needed()) {
  TempDir dir;
  for (int i = 0; i < DType::count; ++i) {
    const DType dtype = static_cast<DType::Id>(i);
    const Array x = from_blocks(
        [dtype](std::span<const int64_t> offset, const Shape& shape) {
          return pattern_array(dtype, shape, offset[0] * 5);  // rows of 5: the pattern's C order
        },
        dtype, {7, 5}, {3, 5});
    store(x, dir / dtype.name() + ".h5:/g/" + dtype.name(),
          {.compute = {.num_workers = 2}, .hdf5 = {.codec = i % 2 == 0 ? "gzip:4" : "none", .shuffle = i % 3 == 0}});
  }
  const Array t = from_hdf5(dir / "float32.h5", "/g/float32", {2, 2});
  store(t, dir / "t.nc:/temp", {.hdf5 = {.codec = "gzip:1", .shuffle = true, .dimension_names = {"time", "lat"}}});
  store(from_hdf5(dir / "int16.h5", "g/int16"), dir / "plain.nc:/v");
  run_python(dir, std::string(kPythonPattern) + kH5pySetup + R"(
import netCDF4, xarray
for name in NAMES:
    with h5py.File(f'{d}/{name}.h5', 'r') as f:
        a = f[f'g/{name}']
        assert a.dtype == np.dtype(name), (name, a.dtype)
        assert a.chunks == (3, 5), a.chunks
        assert (a[...] == pattern(name, (7, 5))).all(), name
with netCDF4.Dataset(f'{d}/t.nc') as n:
    v = n['temp']
    assert v.dimensions == ('time', 'lat'), v.dimensions
    assert v.filters()['zlib'] and v.filters()['shuffle'], v.filters()
    assert (v[...] == pattern('<f4', (7, 5))).all()
    assert v.chunking() == [2, 2], v.chunking()
x = xarray.open_dataset(f'{d}/t.nc')
assert x['temp'].dims == ('time', 'lat'), x['temp'].dims
assert (x['temp'].values == pattern('<f4', (7, 5))).all()
x = xarray.open_dataset(f'{d}/plain.nc')
assert x['v'].dims == ('dim_0', 'dim_1'), x['v'].dims
assert (x['v'].values == pattern('<i2', (7, 5))).all()
)");
  // The published file is the only one left; a second store without overwrite is refused.
  CHECK(h5_says([&] { store(t, dir / "t.nc:/temp"); }, "the target exists"));
  store(t, dir / "t.nc:/other", {.overwrite = true});
  CHECK(hdf5::open(dir / "t.nc", "other").metadata().shape == Shape{7, 5});
  CHECK(h5_message([&] { store(t, dir / "x.h5"); }) ==
        dir / "x.h5" + ": expected an HDF5 target with its dataset, such as " + dir / "x.h5" + ":/data");
  CHECK(h5_says([&] { store(t, dir / "x.h5:/y", {.hdf5 = {.codec = "lz4"}}); },
                "expected none, gzip[:LEVEL] or zstd[:LEVEL], found 'lz4'"));
  size_t files = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir.path())) files += e.path().filename().string()[0] == '.';
  CHECK(files == 0);
}
