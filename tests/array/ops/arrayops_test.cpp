// The lazy Array: creation, graphs, map_blocks, store, and every error path
// with its message.
#include <doctest/doctest.h>

#include <sys/resource.h>

#include <filesystem>
#include <random>
#include <stdexcept>
#include <string>

#include "array/ops/numpy_check.hpp"
#include "storage/pages.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/map_blocks.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/slicing.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"
#include "python_peer.hpp"

using namespace tessera::array;
using tessera::array::testing::check_close;
using tessera::array::testing::random_block;
using tessera::array::testing::run_python_in;
using tessera::array::testing::TempDir;
using tessera::ChunkError;
using tessera::StorageError;
using tessera::TaskError;
using tessera::TypeError;

namespace {

size_t count_keys(const tessera::Graph& g, const std::string& prefix) {
  size_t n = 0;
  for (const tessera::Key& k : g.keys()) n += k.name().substr(0, prefix.size()) == prefix;
  return n;
}

size_t entries(const std::string& dir) {
  size_t n = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++n;
  return n;
}

}  // namespace

TEST_CASE("an Array's blocks are the keys (name, i, j) of its graph") {
  Array x = ones({10, 6}, {4, 3});
  CHECK(x.numblocks() == std::vector<int64_t>{3, 2});
  CHECK(x.name().rfind("full-", 0) == 0);
  REQUIRE(x.keys().size() == 6);
  CHECK(x.keys()[1] == tessera::Key(x.name(), {0, 1}));
  CHECK(x.graph().size() == 6);
  // Names are tokens of the inputs: the same expression twice has the same name.
  CHECK(ones({10, 6}, {4, 3}).name() == x.name());
  CHECK((x + 1).name() == (x + 1).name());
  CHECK((x + 1).name() != (x + 2).name());
}

TEST_CASE("graph() holds only the tasks the blocks need (culled)") {
  Array x = zeros({100}, 10);
  Array y = slice(x, {Slice{0, 15}});  // blocks 0 and 1 of x
  tessera::Graph g = y.graph();
  CHECK(count_keys(g, x.name()) == 2);
  CHECK(count_keys(g, y.name()) == 2);
}

TEST_CASE("a tree reduction has log(blocks) combine levels of at most split_every inputs") {
  // 16 blocks -> chunk x16 -> combine1 x4 -> combine2 x1 -> aggregate
  Array x = ones({16}, 1);
  tessera::Graph g = sum(x, {.split_every = 4}).graph();
  CHECK(count_keys(g, "sum-chunk-") == 16);
  CHECK(count_keys(g, "sum-combine1-") == 4);
  CHECK(count_keys(g, "sum-combine2-") == 1);
  CHECK(count_keys(g, "sum-combine3-") == 0);
  CHECK(sum(x, {.split_every = 4}).compute<int64_t>() == 16);
  CHECK(sum(x, {.split_every = 2}).compute<double>() == 16.0);
}

TEST_CASE("zeros, ones and full make the value and dtype asked for") {
  NDArray z = zeros({3, 4}, 2, DType::int16()).compute();
  CHECK(z.dtype() == DType::int16());
  CHECK(array_equal(z, NDArray::zeros(DType::int16(), {3, 4})));
  CHECK(array_equal(ones({5}, 2).compute(), NDArray::full(DType::float64(), {5}, 1.0)));
  NDArray f = full({2, 3}, 7, {1, 2}).compute();
  CHECK(f.dtype() == DType::int64());  // an int's own dtype
  CHECK(f.at<int64_t>({1, 2}) == 7);
  CHECK(full({4}, 2.5, 3, DType::float32()).compute().at<float>({3}) == 2.5f);
  CHECK_THROWS_AS(full({2}, 300, 1, DType::int8()), TypeError);
  const NDArray h = full({5}, 0.1, 2, DType::float16()).compute();
  CHECK(h.dtype() == DType::float16());
  CHECK(h.at<Eigen::half>({4}) == Eigen::half(0.1f));  // rounded once, to float16's nearest
  CHECK(array_equal(ones({3}, 2, DType::float16()).compute(), NDArray::full(DType::float16(), {3}, 1.0)));
}

TEST_CASE("random is deterministic per block from the seed, on any number of workers") {
  Array r = random({50, 40}, {20, 15}, 42);
  NDArray a = r.compute({.num_workers = 1}), b = random({50, 40}, {20, 15}, 42).compute({.num_workers = 2});
  CHECK(array_equal(a, b));
  CHECK_FALSE(array_equal(a, random({50, 40}, {20, 15}, 43).compute()));
  const double m = mean(r).compute<double>();
  CHECK(m > 0.4);
  CHECK(m < 0.6);
  CHECK(min(r).compute<double>() >= 0.0);
  CHECK(max(r).compute<double>() < 1.0);
  CHECK(random({10}, 5, 1, DType::float32()).dtype() == DType::float32());
  const Array h = random({50, 40}, {20, 15}, 42, DType::float16());
  CHECK(h.compute().dtype() == DType::float16());
  CHECK(mean(astype(h, DType::float64())).compute<double>() > 0.4);
  CHECK(mean(astype(h, DType::float64())).compute<double>() < 0.6);
  CHECK(max(h).compute<double>() < 1.0);
  REQUIRE_THROWS_WITH_AS(random({10}, 5, 1, DType::int32()),
                         "random: expected a floating dtype (float16, float32 or float64), found int32", TypeError);
}

TEST_CASE("from_function gives f(index); from_ndarray cuts an array into views") {
  Array f = from_function<int64_t>([](std::span<const int64_t> i) { return i[0] * 10 + i[1]; }, {4, 5}, {3, 2});
  NDArray v = f.compute();
  CHECK(v.at<int64_t>({3, 4}) == 34);
  CHECK(v.at<int64_t>({2, 1}) == 21);

  std::mt19937_64 rng(1);
  NDArray data = random_block(DType::int32(), {7, 5}, rng);
  Array x = from_ndarray(data, {3, 5});
  CHECK(x.chunks().str() == "((3, 3, 1), (5,))");
  CHECK(array_equal(x.compute(), data));
  REQUIRE_THROWS_WITH_AS(from_ndarray(NDArray()), "from_ndarray: the NDArray is empty (has no value)",
                         tessera::Error);
}

TEST_CASE("from_npy is lazy: the data is read when the graph runs, not when it is built") {
  TempDir dir;
  npy::save(dir / "x.npy", NDArray::full(DType::float64(), {6, 4}, 1.0));
  Array x = from_npy(dir / "x.npy", {2, -1});
  // Change the data (same header) after building the graph: compute sees the new data.
  npy::open(dir / "x.npy", Access::ReadWrite).fill(3.0);
  CHECK(sum(x).compute<double>() == 72.0);
  // The default chunks are contiguous runs of the file.
  CHECK(from_npy(dir / "x.npy").chunks().str() == "((6,), (4,))");
  REQUIRE_THROWS_AS(from_npy(dir / "missing.npy"), StorageError);
}

TEST_CASE("from_npy reads Fortran-ordered files, from_zarr zarr stores written by python3-zarr, compressed too" *
          python_peer::needed()) {
  TempDir dir;
  run_python_in(dir,
             "import zarr\n"
             "a = np.arange(35, dtype=np.int32).reshape(7, 5)\n"
             "np.save('f.npy', np.asfortranarray(a))\n"
             "z = zarr.open('z.zarr', mode='w', shape=(7, 5), chunks=(3, 2), dtype='<i4', compressor=None)\n"
             "z[:] = a\n"
             "zarr.open('c.zarr', mode='w', shape=(4,), chunks=(2,), dtype='<f8')[:] = 1\n");
  NDArray want = from_function<int32_t>([](std::span<const int64_t> i) { return i[0] * 5 + i[1]; }, {7, 5}).compute();
  CHECK(array_equal(from_npy(dir / "f.npy", {3, 2}).compute(), want));
  Array z = from_zarr(dir / "z.zarr");
  CHECK(z.chunks().str() == "((3, 3, 1), (2, 2, 1))");
  CHECK(array_equal(z.compute({.num_workers = 2}), want));
  CHECK(sum(z).compute<int64_t>() == 595);
  // A compressed store (zarr-python's default, blosc) is decoded by the blocks' tasks.
  CHECK(array_equal(from_zarr(dir / "c.zarr").compute({.num_workers = 2}), NDArray::full(DType::float64(), {4}, 1.0)));
}

TEST_CASE("map_blocks runs an Eigen kernel on every block") {
  std::mt19937_64 rng(3);
  NDArray a = random_block(DType::float64(), {9, 4}, rng), b = random_block(DType::float64(), {9, 4}, rng);
  Array x = from_ndarray(a, {4, 2}), y = from_ndarray(b, {4, 2});
  Array sq = map_blocks<double, 2>([](auto t) { return t * t + 1.0; }, x);
  Array diff = map_blocks<double, 2>([](auto s, auto t) { return s - t; }, x, y);
  check_close(sq.compute(), (x * x + 1.0).compute(), "t * t + 1");
  check_close(diff.compute(), (x - y).compute(), "s - t");
  // A kernel returning another dtype: the output's dtype follows it.
  Array f = map_blocks<double, 2>([](auto t) { return t.template cast<float>(); }, x);
  CHECK(f.dtype() == DType::float32());
  check_close(f.compute(), astype(x, DType::float32()).compute(), "cast<float>");
}

// A kernel's expression is evaluated straight into its block, whose large
// pages the next block of its size reuses (Buffer::allocate): no Eigen::Tensor
// between them, whose fresh malloc'ed pages would fault in one by one for
// every block (18432 faults for these 72 MiB) and be copied after.
TEST_CASE("map_blocks evaluates a kernel's expression into the block, not into a fresh tensor first") {
  if (tessera::detail::kSanitizedHeap) return;  // the sanitizer's own bookkeeping faults pages in too
  const int64_t n = (int64_t{72} << 20) / 8;
  const Array x = from_ndarray(NDArray::full(DType::float64(), {n}, 3.0), {n});
  const Array y = map_blocks<double, 1>([](auto a) { return a * 2.0 + 1.0; }, x);
  CHECK(y.compute().at<double>({n - 1}) == 7.0);  // its block is kept once this result goes
  auto minor_faults = [] {
    rusage u{};
    ::getrusage(RUSAGE_SELF, &u);
    return u.ru_minflt;
  };
  const long before = minor_faults();
  CHECK(y.compute().at<double>({0}) == 7.0);
  CHECK(minor_faults() - before < 2000);
}

TEST_CASE("map_blocks kernels get C-ordered maps of strided blocks (the tensor route)") {
  // Blocks of a transposed array are Fortran-strided views; the kernel's maps
  // must still read element (i, j) as (i, j).
  std::vector<double> v(12);
  for (size_t i = 0; i < v.size(); ++i) v[i] = static_cast<double>(i);
  const NDArray t = NDArray::from_vector(v, {3, 4}).transpose();  // (4, 3), not C-contiguous
  REQUIRE_FALSE(t.is_c_contiguous());
  const Array x = from_ndarray(t, {2, 3});
  const NDArray y = map_blocks<double, 2>([](auto a) { return a * 10.0; }, x).compute();
  for (int64_t i = 0; i < 4; ++i) {
    for (int64_t j = 0; j < 3; ++j) CHECK(y.at<double>({i, j}) == 10.0 * t.at<double>({i, j}));
  }
}

TEST_CASE("arrays computed one after another leave no names behind once they are gone") {
  // Each round makes unique names (from_ndarray, map_blocks, compute); a process
  // that runs such rounds for ever must not keep them.
  const NDArray data = NDArray::from_vector(std::vector<double>{1, 2, 3, 4}, {4});
  auto round = [&] {
    Array x = from_ndarray(data, {2});
    Array y = map_blocks<double, 1>([](auto a) { return a + 1.0; }, x);
    CHECK(y.compute().data<double>()[3] == 5.0);
  };
  round();  // the first round pins the task function names it uses
  const size_t base = tessera::detail::interned_name_count();
  for (int i = 0; i < 20; ++i) round();
  CHECK(tessera::detail::interned_name_count() == base);
}

TEST_CASE("map_blocks errors name the input, the block and what was expected") {
  Array x = ones({6}, 3), i = ones({6}, 3, DType::int32());
  auto twice = [&] { return map_blocks<double, 1>([](auto t) { return t * 2.0; }, i); };
  REQUIRE_THROWS_WITH_AS(twice(),
                         doctest::Contains("the kernel takes float64 maps of rank 1, but input 0"), TypeError);
  auto add = [&] { return map_blocks<double, 1>([](auto s, auto t) { return s + t; }, x, ones({6}, 2)); };
  REQUIRE_THROWS_WITH_AS(add(),
                         doctest::Contains("whose blocks do not match input 0's ((3, 3),)"), ChunkError);
  // A block of the wrong shape fails its task.
  Array bad = map_blocks(
      [](std::span<const NDArray>) { return NDArray::zeros(DType::float64(), {2}); }, {x}, DType::float64());
  try {
    bad.compute();
    FAIL("expected a TaskError");
  } catch (const TaskError& e) {
    // Either block may fail first.
    CHECK(e.message().find("made block ('" + bad.name() + "', ") != std::string::npos);
    CHECK(e.message().find(") as a float64 array of shape (2,), expected a float64 array of shape (3,)") !=
          std::string::npos);
  }
}

TEST_CASE("element-wise errors: shapes, chunks, bool subtract, scalars that do not fit") {
  Array x = ones({6}, 3), y = ones({6}, 2), z = ones({5}, 5);
  REQUIRE_THROWS_WITH_AS(x * z, "multiply: operands could not be broadcast together with shapes (6,) (5,)",
                         ChunkError);
  REQUIRE_THROWS_WITH_AS(ones({2, 3}, 1) - ones({3, 2}, 1),
                         "subtract: operands could not be broadcast together with shapes (2, 3) (3, 2)", ChunkError);
  Array b = ones({4}, 2, DType::bool_());
  REQUIRE_THROWS_WITH_AS(b - b, doctest::Contains("boolean subtract"), TypeError);
  REQUIRE_THROWS_AS(ones({4}, 2, DType::int8()) + 1000, TypeError);
  CHECK(promote_types(DType::int64(), DType::uint64()) == DType::float64());
  CHECK(promote_types(DType::int8(), DType::uint8()) == DType::int16());
  CHECK(promote_types(DType::int16(), DType::float32()) == DType::float32());
  CHECK(promote_types(DType::float64(), DType::complex64()) == DType::complex128());
}

TEST_CASE("reduction and slicing errors say what was expected") {
  Array x = ones({4, 3}, 2);
  REQUIRE_THROWS_WITH_AS(sum(x, {.axis = {2}}), "axis 2 is out of bounds for an array of 2 dimension(s)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(sum(x, {.axis = {1, -1}}), "axis 1 is given twice in the axes to reduce", tessera::Error);
  REQUIRE_THROWS_WITH_AS(mean(x, {.split_every = 1}), "mean: split_every must be at least 2, found 1",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(min(zeros({0, 3}, 2), {.axis = {0}}),
                         doctest::Contains("zero-size array to reduction operation min which has no identity"),
                         tessera::Error);
  CHECK(sum(zeros({0, 3}, 2)).compute<double>() == 0.0);
  REQUIRE_THROWS_WITH_AS(slice(x, {Slice::all(), Slice::all(), Slice::all()}),
                         doctest::Contains("too many indices: 3 slices for an array of 2 dimension(s)"),
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(slice(x, {Slice{0, 4, 0}}), "slice step cannot be zero (axis 0)", tessera::Error);
  REQUIRE_THROWS_WITH_AS(slice(x, {Slice::index(4)}), "index 4 is out of bounds for axis 0 with size 4",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(x.compute<double>(), doctest::Contains("compute<T>() needs an array of one element"),
                         TypeError);
}

TEST_CASE("store writes .npy and zarr targets that numpy and python3-zarr read back" *
          python_peer::needed()) {
  TempDir dir;
  std::mt19937_64 rng(11);
  NDArray a = random_block(DType::float32(), {9, 7}, rng);
  Array x = from_ndarray(a, {4, 3}) * 2;
  store(x, dir / "out.npy", {.compute = {.num_workers = 2}});
  store(x, dir / "out.zarr");
  CHECK(entries(dir.path().string()) == 2);  // no temporary left
  npy::save(dir / "a.npy", a);
  run_python_in(dir,
             "import zarr\n"
             "a = np.load('a.npy') * 2\n"
             "assert (np.load('out.npy') == a).all()\n"
             "z = zarr.open('out.zarr', mode='r')\n"
             "assert z.chunks == (4, 3) and z.dtype == np.float32, (z.chunks, z.dtype)\n"
             "assert (z[:] == a).all()\n");
  CHECK(array_equal(from_zarr(dir / "out.zarr").compute(), x.compute()));
}

TEST_CASE("store refuses an existing target unless overwrite, and replaces it then") {
  TempDir dir;
  store(ones({4}, 2), dir / "t.npy");
  REQUIRE_THROWS_WITH_AS(store(zeros({4}, 2), dir / "t.npy"),
                         doctest::Contains("the target exists; pass overwrite to replace it"), StorageError);
  store(zeros({4}, 2), dir / "t.npy", {.overwrite = true});
  CHECK(sum(from_npy(dir / "t.npy")).compute<double>() == 0.0);
  store(ones({4}, 2), dir / "t.zarr");
  store(full({4}, 5.0, 2), dir / "t.zarr", {.overwrite = true});
  CHECK(sum(from_zarr(dir / "t.zarr")).compute<double>() == 20.0);
  REQUIRE_THROWS_WITH_AS(store(ones({5}, {{2, 3}}), dir / "u.zarr"),
                         doctest::Contains("store to zarr needs regular chunks"), ChunkError);
  CHECK(entries(dir.path().string()) == 2);
}

TEST_CASE("a failed store leaves no target and no temporary file") {
  TempDir dir;
  Array bad = from_blocks(
      [](std::span<const int64_t> offset, const Shape& s) {
        if (offset[0] == 4) throw std::runtime_error("disk on fire");
        return NDArray::zeros(DType::float64(), s);
      },
      DType::float64(), {12}, 2);
  for (const std::string target : {"f.npy", "f.zarr"}) {
    for (int workers : {1, 2}) {
      REQUIRE_THROWS_WITH_AS(store(bad, dir / target, {.compute = {.num_workers = workers}}),
                             doctest::Contains("disk on fire"), TaskError);
      CHECK(entries(dir.path().string()) == 0);
    }
  }
  // An existing target survives a failed overwrite untouched.
  store(ones({12}, 2), dir / "f.npy");
  REQUIRE_THROWS_AS(store(bad, dir / "f.npy", {.overwrite = true}), TaskError);
  CHECK(entries(dir.path().string()) == 1);
  CHECK(sum(from_npy(dir / "f.npy")).compute<double>() == 12.0);
}

TEST_CASE("store into an existing array: C, Fortran and strided targets; a target that does not fit is refused") {
  std::mt19937_64 rng(5);
  const NDArray data = random_block(DType::float64(), {12, 10}, rng);
  const Array x = from_ndarray(data, {5, 4});
  for (Order order : {Order::C, Order::F}) {
    NDArray out = NDArray::zeros(DType::float64(), {12, 10}, order);
    store(x, out, {.num_workers = 2});
    CHECK(array_equal(out, data));
  }
  // Every other column of a wider array.
  NDArray wide = NDArray::zeros(DType::float64(), {12, 20});
  NDArray view = wide.slice({Slice{0, 12, 1}, Slice{0, 20, 2}});
  store(x, view);
  CHECK(array_equal(view, data));
  CHECK(wide.at<double>({3, 1}) == 0.0);

  NDArray small = NDArray::zeros(DType::float64(), {12, 9});
  REQUIRE_THROWS_WITH_AS(store(x, small), doctest::Contains("store: expected a writable float64 array of shape (12, 10)"),
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(store(x, NDArray::zeros(DType::float32(), {12, 10})),
                         doctest::Contains("expected a writable float64 array"), tessera::Error);
  CHECK(array_equal(x.compute({.num_workers = 2}), data));  // compute() stores into a fresh array
}
