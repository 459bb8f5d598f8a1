#include <doctest/doctest.h>

#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <numeric>
#include <vector>

#include "storage/pages.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/value.hpp"
#include "tessera/graph/wire.hpp"

using namespace tessera;
using namespace tessera::array;

namespace {

// 0, 1, 2, ... as a C-ordered array of `shape`.
NDArray iota(Shape shape) {
  int64_t n = 1;
  for (int64_t e : shape) n *= e;
  std::vector<double> v(static_cast<size_t>(n));
  std::iota(v.begin(), v.end(), 0.0);
  return NDArray::from_vector(v, std::move(shape));
}

}  // namespace

TEST_CASE("new arrays are 64-byte aligned, C or Fortran ordered, and report nbytes") {
  NDArray a = NDArray::zeros(DType::float32(), {3, 5});
  CHECK(reinterpret_cast<uintptr_t>(a.data()) % 64 == 0);
  CHECK(a.strides() == Strides{20, 4});
  CHECK(a.nbytes() == 60);
  CHECK(a.is_c_contiguous());
  CHECK(!a.is_f_contiguous());
  CHECK(a.at<float>({2, 4}) == 0.0f);
  NDArray f = NDArray::empty(DType::int16(), {3, 5}, Order::F);
  CHECK(f.strides() == Strides{2, 6});
  CHECK(f.is_f_contiguous());
  CHECK(Value(a).nbytes() == 60);
  CHECK(NDArray::full(DType::int32(), {2}, 7).at<int32_t>({1}) == 7);
  REQUIRE_THROWS_WITH_AS(NDArray::full(DType::uint8(), {2}, -1), doctest::Contains("cannot be represented as uint8"),
                         TypeError);
  REQUIRE_THROWS_WITH_AS(NDArray::from_vector(std::vector<double>{1, 2, 3}, {2, 2}),
                         "from_vector: shape (2, 2) holds 4 elements, found 3 values", Error);
}

TEST_CASE("slicing with steps returns views that share the buffer") {
  NDArray a = iota({4, 6});
  NDArray b = a.slice({Slice{1, 3}, Slice{0, std::nullopt, 2}});  // a[1:3, ::2]
  CHECK(b.shape() == Shape{2, 3});
  CHECK(b.buffer().data() == a.buffer().data());
  CHECK(b.at<double>({0, 0}) == 6);
  CHECK(b.at<double>({1, 2}) == 16);
  b.fill(-1);
  CHECK(a.at<double>({2, 4}) == -1);
  CHECK(a.at<double>({2, 5}) == 17);

  NDArray r = a.slice({Slice{std::nullopt, std::nullopt, -1}, Slice{-2}});  // a[::-1, -2:]
  CHECK(r.shape() == Shape{4, 2});
  CHECK(r.at<double>({0, 0}) == 22);
  CHECK(r.at<double>({3, 1}) == 5);
  NDArray row = a.slice({Slice::index(-1)});  // a[-1]
  CHECK(row.shape() == Shape{6});
  CHECK(row.at<double>({0}) == 18);
  CHECK(a.slice({Slice{5, 2}}).shape() == Shape{0, 6});
  CHECK(a.slice({Slice{3, 0, -2}}).shape() == Shape{2, 6});  // rows 3, 1
  CHECK(iota({4, 6}).slice({Slice{3, 0, -2}}).at<double>({1, 0}) == 6);

  REQUIRE_THROWS_WITH_AS(a.slice({Slice{0, 1, 0}}), "slice: the step of axis 0 is 0; expected a nonzero step", Error);
  REQUIRE_THROWS_WITH_AS(a.slice({Slice::index(4)}), doctest::Contains("index 4 is out of range for axis 0"), Error);
  REQUIRE_THROWS_AS(a.slice({Slice{}, Slice{}, Slice{}}), Error);
}

TEST_CASE("copy makes a contiguous array; Fortran data is a view with F strides") {
  NDArray a = iota({3, 4});
  NDArray s = a.slice({Slice{}, Slice{1, std::nullopt, 2}});
  CHECK(!s.is_c_contiguous());
  NDArray c = s.copy();
  CHECK(c.is_c_contiguous());
  CHECK(array_equal(c, s));
  CHECK(c.buffer().data() != a.buffer().data());
  NDArray f = a.copy(Order::F);
  CHECK(f.is_f_contiguous());
  CHECK(array_equal(f, a));
  CHECK(f.transpose().is_c_contiguous());
  CHECK(f.transpose().at<double>({3, 2}) == 11);
  CHECK(a.transpose({1, 0}).shape() == Shape{4, 3});
  REQUIRE_THROWS_WITH_AS(a.transpose({0, 0}), doctest::Contains("expected a permutation of the 2 axes"), Error);
  CHECK(a.reshape({2, 6}).at<double>({1, 0}) == 6);
  REQUIRE_THROWS_WITH_AS(s.reshape({6}), doctest::Contains("is not C-contiguous"), Error);
}

TEST_CASE("assign and astype copy between layouts and dtypes") {
  NDArray a = iota({2, 3});
  NDArray f = NDArray::zeros(DType::float64(), {2, 3}, Order::F);
  f.assign(a);
  CHECK(array_equal(f, a));
  NDArray i = a.astype(DType::int8());
  CHECK(i.dtype() == DType::int8());
  CHECK(i.at<int8_t>({1, 2}) == 5);
  NDArray z = a.astype(DType::complex64());
  CHECK(z.at<std::complex<float>>({1, 1}) == std::complex<float>(4, 0));
  CHECK(z.astype(DType::bool_()).at<bool>({0, 0}) == false);
  CHECK(z.astype(DType::bool_()).at<bool>({0, 1}) == true);
  REQUIRE_THROWS_WITH_AS(f.assign(i), "assign: expected a float64 array of shape (2, 3), found a int8 array of shape (2, 3)",
                         Error);
  NDArray nan = NDArray::full(DType::float64(), {2}, std::nan(""));
  CHECK(array_equal(nan, nan.copy()));
  CHECK(!array_equal(a, a.astype(DType::float32())));
}

TEST_CASE("astype from float64 and complex128 to float16 rounds once, as numpy's") {
  // 1 + 2^-11 is halfway between float16's 1 and 1 + 2^-10: just above it goes
  // up (a float in between would land on the halfway point and go to even, 1).
  const double above = 1 + 0x1p-11 + 0x1p-40, tie = 1 + 0x1p-11, below = 1 + 3 * 0x1p-11 - 0x1p-40;
  NDArray d = NDArray::empty(DType::float64(), {6});
  const double values[] = {above, -above, tie, below, 65519.99, 0x1p-25 + 0x1p-60};
  std::copy(std::begin(values), std::end(values), d.data<double>());
  const NDArray h = d.astype(DType::float16());
  // numpy 1.24: np.float64(v).astype(np.float16) for each value.
  const float numpy[] = {1.0009765625f, -1.0009765625f, 1.0f, 1.0009765625f, 65504.0f, 0x1p-24f};
  for (int i = 0; i < 6; ++i) {
    CAPTURE(i);
    CHECK(static_cast<float>(h.at<Eigen::half>({i})) == numpy[i]);
  }
  const NDArray c = d.astype(DType::complex128()).astype(DType::float16());
  CHECK(array_equal(c, h));
}

TEST_CASE("views are checked against their buffer, and read-only buffers refuse writes") {
  Buffer b = Buffer::allocate(64);
  CHECK(NDArray(b, DType::float64(), {8}, {8}, 0).size() == 8);
  CHECK(NDArray(b, DType::float64(), {8}, {-8}, 56).at<double>({0}) == NDArray(b, DType::float64(), {8}, {8}, 0).at<double>({7}));
  REQUIRE_THROWS_WITH_AS(NDArray(b, DType::float64(), {9}, {8}, 0), doctest::Contains("reaches outside the buffer of 64 bytes"),
                         Error);
  REQUIRE_THROWS_AS(NDArray(b, DType::float64(), {8}, {-8}, 0), Error);
  REQUIRE_THROWS_AS(NDArray(b, DType::float64(), {2}, {8, 8}, 0), Error);
  Buffer ro(std::shared_ptr<std::byte>(b.data(), [keep = b](std::byte*) {}), 64, false);
  NDArray r(ro, DType::float64(), {8}, {8}, 0);
  CHECK(r.data<const double>() != nullptr);
  REQUIRE_THROWS_WITH_AS(r.data<double>(), doctest::Contains("is read-only"), Error);
  REQUIRE_THROWS_WITH_AS(r.fill(1), doctest::Contains("is read-only"), Error);
  REQUIRE_THROWS_WITH_AS((r.tensor<double, 1>()), doctest::Contains("ask for const float64 elements"), Error);
}

// A freed buffer over 64 MiB is parked for the next of about its size: the
// next one gets its memory back, and zeros() still reads as zeros, whatever the
// parked pages held.
TEST_CASE("large buffers reuse the last one freed, and zeros() of a reused one is zero") {
  const int64_t n = (int64_t{80} << 20) / 8;  // 80 MiB of float64
  const std::byte* first = nullptr;
  {
    NDArray a = NDArray::full(DType::float64(), {n}, Scalar(7.0));
    first = a.data();
  }
  NDArray b = NDArray::zeros(DType::float64(), {n - 1000});
  CHECK(b.data() == first);
  const double* p = b.data<const double>();
  int64_t nonzero = 0;
  for (int64_t i = 0; i < b.size(); ++i) nonzero += p[i] != 0.0;
  CHECK(nonzero == 0);
  // Twice the size is no match: fresh memory, not the parked block.
  NDArray c = NDArray::empty(DType::float64(), {2 * n});
  CHECK(c.data() != first);
  // The kept buffer counts in RSS until release_kept returns it to the kernel.
  c.fill(Scalar(1.0));
  c = NDArray();
  auto rss_mib = [] {
    std::ifstream statm("/proc/self/statm");
    int64_t pages = 0, resident = 0;
    statm >> pages >> resident;
    return resident * ::sysconf(_SC_PAGESIZE) / (int64_t{1} << 20);
  };
  const int64_t before = rss_mib();
  Buffer::release_kept();
  CHECK(before - rss_mib() >= 150);  // the 160 MiB of c
}

// A chain of tasks frees one large block while the next ones are alive (a
// rechunked block, its transform, the transform's power): the freed mappings
// are all kept for the next blocks of their size, a bounded number of them, and
// release_kept (as a run under a memory limit does) returns every one.
TEST_CASE("several freed large buffers are kept and reused, at most a few, until release_kept") {
  Buffer::release_kept();
  const size_t size = size_t{72} << 20;  // past the 64 MiB of oneTBB's tier
  std::vector<const std::byte*> first;
  {
    std::vector<Buffer> held;
    for (int i = 0; i < 3; ++i) {
      held.push_back(Buffer::allocate(size));
      first.push_back(held.back().data());
    }
  }
  CHECK(tessera::detail::kept_pages().mappings == 3);
  {
    std::vector<Buffer> again;
    for (int i = 0; i < 3; ++i) {
      again.push_back(Buffer::allocate(size - 4096));
      CHECK(std::find(first.begin(), first.end(), again.back().data()) != first.end());
    }
    CHECK(tessera::detail::kept_pages().mappings == 0);
    for (int i = 0; i < 4; ++i) again.push_back(Buffer::allocate(size));
  }
  // Seven freed: only the last few are kept, and fewer than 1 GiB of them.
  const tessera::detail::KeptPages kept = tessera::detail::kept_pages();
  CHECK(kept.mappings == 4);
  CHECK(kept.bytes <= size_t{1} << 30);
  Buffer::release_kept();
  CHECK(tessera::detail::kept_pages().mappings == 0);
  CHECK(tessera::detail::kept_pages().bytes == 0);
}

// A copy of a transposed view of C-ordered memory takes Eigen's shuffle (rank 2
// to 4, elements moved by their size); other strided views take the general
// loop. array_equal reads both element by element, so either way must agree.
TEST_CASE("copies of transposed views of every rank and element size equal the views") {
  for (DType dtype : {DType::bool_(), DType::int16(), DType::float32(), DType::float64(), DType::complex128()}) {
    for (const Shape& shape : {Shape{3, 4}, Shape{2, 3, 4}, Shape{2, 3, 4, 5}, Shape{2, 1, 3}}) {
      NDArray a = NDArray::empty(dtype, shape);
      auto* bytes = reinterpret_cast<unsigned char*>(a.data());
      for (size_t i = 0; i < a.nbytes(); ++i) bytes[i] = static_cast<unsigned char>(dtype == DType::bool_() ? i % 2 : i * 7 + 1);
      std::vector<size_t> axes(shape.size());
      std::iota(axes.begin(), axes.end(), size_t{0});
      do {
        INFO(dtype.name(), " ", shape_str(shape), " axes ", axes[0], axes[1]);
        const NDArray view = a.transpose(axes);
        const NDArray c = view.copy();
        CHECK(c.is_c_contiguous());
        CHECK(array_equal(c, view));
      } while (std::next_permutation(axes.begin(), axes.end()));
    }
    // A stepped slice of a transpose is no permutation of C-ordered memory.
    NDArray b = NDArray::empty(dtype, {6, 4});
    b.fill(Scalar(true));
    const NDArray stepped = b.transpose().slice({Slice::all(), Slice{0, 6, 2}});
    CHECK(array_equal(stepped.copy(), stepped));
  }
}

// A result sent to another rank goes from its own buffer (Communicator::
// send_parts): writing it for the wire copies none of its elements, and its
// parts read as the bytes a BytesWriter gathers.
TEST_CASE("an NDArray written for the wire in parts keeps its elements in its buffer, not copied") {
  const NDArray a = iota({512, 64});  // 256 KiB of float64: a part of its own
  tessera::PartsWriter w;
  w.put<uint32_t>(7);
  tessera::to_wire(Value(a), w);
  const std::vector<tessera::SharedBytes>& parts = w.parts();
  REQUIRE(parts.size() == 2);
  CHECK(parts[1].data.get() == a.data());
  CHECK(parts[1].size == a.nbytes());
  CHECK(a.buffer().use_count() == 2);  // the part keeps the buffer alive until sent
  tessera::BytesWriter gathered;
  gathered.put<uint32_t>(7);
  tessera::to_wire(Value(a), gathered);
  std::vector<std::byte> joined;
  for (const tessera::SharedBytes& p : parts) joined.insert(joined.end(), p.data.get(), p.data.get() + p.size);
  CHECK(joined == gathered.bytes());
  CHECK(w.size() == joined.size());
  // A small array is copied into the header's part: one part.
  tessera::PartsWriter small;
  tessera::to_wire(Value(iota({3, 4})), small);
  CHECK(small.parts().size() == 1);
}

TEST_CASE("an NDArray crosses the wire as its values in C order and comes back as a view of the received bytes") {
  const NDArray a = iota({3, 4, 5});
  const NDArray strided = a.transpose({2, 0, 1});  // not C-contiguous: sent in its own C order
  for (const NDArray& x : {a, strided}) {
    auto bytes = std::make_shared<std::vector<std::byte>>(tessera::to_wire(Value(x)));
    tessera::BytesReader r(std::shared_ptr<const std::byte>(bytes, bytes->data()), bytes->size(), "a message");
    const NDArray back = tessera::from_wire(r).as<NDArray>();
    CHECK(back.dtype() == x.dtype());
    CHECK(back.shape() == x.shape());
    const NDArray got = back.copy(), want = x.copy();  // C order, contiguous
    CHECK(std::equal(got.data<const double>(), got.data<const double>() + 60, want.data<const double>()));
    const auto* data = static_cast<const std::byte*>(back.data());
    CHECK(data >= bytes->data());
    CHECK(data + back.nbytes() <= bytes->data() + bytes->size());  // no copy
  }
}
