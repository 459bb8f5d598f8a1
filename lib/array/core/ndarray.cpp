#include "tessera/array/core/ndarray.hpp"

#include <oneapi/tbb/scalable_allocator.h>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <complex>
#include <cstring>
#include <new>
#include <utility>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/core/strided.hpp"
#include "tessera/array/core/tensor.hpp"
#include "array/io/bus_guard.hpp"
#include "tessera/graph/error.hpp"
#include "storage/pages.hpp"

namespace tessera::array {
namespace {

constexpr size_t kAlign = 64;

// numpy's rule: axes of extent 1 may have any stride; an empty array is contiguous.
bool contiguous(const Shape& shape, const Strides& strides, size_t itemsize, bool c_order) {
  int64_t expected = static_cast<int64_t>(itemsize);
  const size_t n = shape.size();
  for (size_t i = 0; i < n; ++i) {
    size_t a = c_order ? n - 1 - i : i;
    if (shape[a] == 0) return true;
    if (shape[a] != 1 && strides[a] != expected) return false;
    expected *= shape[a];
  }
  return true;
}

// double to float16 rounded once, as numpy's astype rounds: Eigen::half(double)
// rounds to float first, and a double just past a float16 midpoint can land on
// the midpoint as a float, then round to even the wrong way. Rounding to float
// toward zero with the last bit set when inexact (round to odd) keeps which side
// of the midpoint it was; float's 13 extra bits make the second rounding right.
Eigen::half half_from_double(double d) {
  float f = static_cast<float>(d);
  if (std::isfinite(f) && static_cast<double>(f) != d) {
    if (std::abs(static_cast<double>(f)) > std::abs(d)) f = std::nextafter(f, 0.0f);
    f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
  }
  return Eigen::half(f);
}

template <class Dst, class Src>
Dst real_cast(Src v) {
  if constexpr (std::is_same_v<Dst, Eigen::half> && std::is_same_v<Src, double>) {
    return half_from_double(v);
  } else {
    return static_cast<Dst>(v);
  }
}

template <class Dst, class Src>
Dst convert(Src v) {
  constexpr bool dst_complex = DType(dtype_of<Dst>).is_complex();
  constexpr bool src_complex = DType(dtype_of<Src>).is_complex();
  if constexpr (std::is_same_v<Dst, bool>) {
    return v != Src{};
  } else if constexpr (src_complex && !dst_complex) {
    return real_cast<Dst>(v.real());
  } else if constexpr (dst_complex && !src_complex) {
    return Dst(static_cast<typename Dst::value_type>(v), 0);
  } else {
    return real_cast<Dst>(v);
  }
}

// `x` converted element by element as convert<Dst> does: Eigen's cast (vectorized)
// between real numbers, where it is the same static_cast; convert itself otherwise.
template <class Dst, class Src, class X>
auto converted(const X& x) {
  if constexpr (std::is_arithmetic_v<Src> && std::is_arithmetic_v<Dst> && !std::is_same_v<Dst, bool>) {
    return x.template cast<Dst>();
  } else {
    return x.unaryExpr([](Src v) { return convert<Dst>(v); });
  }
}

template <class T>
bool same_value(T a, T b) {
  if constexpr (is_floating_v<T>) {
    return a == b || (std::isnan(a) && std::isnan(b));
  } else if constexpr (DType(dtype_of<T>).is_complex()) {
    return same_value(a.real(), b.real()) && same_value(a.imag(), b.imag());
  } else {
    return a == b;
  }
}

}  // namespace

size_t array_nbytes(DType dtype, const Shape& shape) {
  __int128 n = dtype.itemsize();
  for (int64_t e : shape) {
    if (e < 0) throw Error(absl::StrCat("shape ", shape_str(shape), " has a negative extent"));
    n *= e;
    if (n > INT64_MAX) {
      throw Error(absl::StrCat("a ", dtype.name(), " array of shape ", shape_str(shape),
                               " is too large (2^63 bytes or more)"));
    }
  }
  return static_cast<size_t>(n);
}

// Large blocks are recycled (oneTBB's allocator, the kept mappings) except
// under a sanitizer, which must see each one (storage/pages.hpp).
constexpr bool kRecycleLargeBuffers = !tessera::detail::kSanitizedHeap;

void Buffer::release_kept() { tessera::detail::release_kept_pages(); }

Buffer Buffer::allocate(size_t size, bool zero) {
  // Three tiers, because a block is written once right after it is allocated,
  // and faulting in fresh 4 KiB pages costs several times the writing itself:
  //  - blocks of 2 to 64 MiB (most chunked-array blocks) come from oneTBB's
  //    scalable allocator, whose large-object cache hands a freed block's
  //    pages to the next block of its size and releases those left unused;
  //  - larger buffers come straight from the kernel with transparent huge
  //    pages requested where the system grants them on request, as numpy asks
  //    for its large arrays (far fewer faults); a few freed ones are kept
  //    for the next of about their size (storage/pages.hpp keep_pages);
  //  - small ones from the heap, rounded up to whole cache lines and never zero
  //    bytes, so data() is never null.
  constexpr size_t kLarge = size_t{2} << 20;
  constexpr size_t kCached = size_t{64} << 20;
  if (kRecycleLargeBuffers && size >= kLarge && size <= kCached) {
    auto* p = static_cast<std::byte*>(::scalable_aligned_malloc(size, kAlign));
    if (p == nullptr) throw std::bad_alloc();
    // oneTBB maps these without asking for huge pages: a fresh 16 MiB block took
    // 4096 faults, which cost more than computing it on a virtual machine
    // (bench/algebra, a cold process). The whole 2 MiB pages inside the block
    // are marked as numpy marks its large arrays; a recycled block keeps the mark.
    tessera::detail::advise_huge_pages(p, size);
    tessera::detail::prefault_pages(p, size);  // a block is written whole right away
    if (zero) std::memset(p, 0, size);
    return Buffer(std::shared_ptr<std::byte>(p, [](std::byte* q) { ::scalable_aligned_free(q); }), size, true);
  }
  if (size > kCached) {
    const tessera::detail::Pages pages = tessera::detail::take_pages(size);
    tessera::detail::prefault_pages(pages.data, size);
    if (zero && !pages.zero)
      std::memset(pages.data, 0, size);  // kept pages hold old data, or zeros where the kernel took them
    return Buffer(std::shared_ptr<std::byte>(pages.data, [pages](std::byte*) { tessera::detail::keep_pages(pages); }),
                  size, true);
  }
  size_t rounded = std::max(kAlign, (size + kAlign - 1) / kAlign * kAlign);
  auto* p = static_cast<std::byte*>(::operator new(rounded, std::align_val_t{kAlign}));
  if (zero) std::memset(p, 0, rounded);
  return Buffer(std::shared_ptr<std::byte>(p, [](std::byte* q) { ::operator delete(q, std::align_val_t{kAlign}); }),
                size, true);
}

NDArray::NDArray(Buffer buffer, DType dtype, Shape shape, Strides strides, int64_t offset)
    : buffer_(std::move(buffer)), dtype_(dtype), shape_(std::move(shape)), strides_(std::move(strides)),
      offset_(offset) {
  if (shape_.size() != strides_.size()) {
    throw Error(absl::StrCat("array view: shape ", shape_str(shape_), " has ", shape_.size(), " axes but ",
                             strides_.size(), " strides were given"));
  }
  const bool empty = array_nbytes(dtype_, shape_) == 0;
  if (offset_ < 0 || static_cast<size_t>(offset_) > buffer_.size()) {
    throw Error(absl::StrCat("array view: offset ", offset_, " is outside the buffer of ", buffer_.size(), " bytes"));
  }
  if (empty) return;
  __int128 lo = offset_, hi = offset_ + static_cast<__int128>(dtype_.itemsize());
  for (size_t a = 0; a < shape_.size(); ++a) {
    __int128 span = static_cast<__int128>(shape_[a] - 1) * strides_[a];
    (span < 0 ? lo : hi) += span;
  }
  if (lo < 0 || hi > static_cast<__int128>(buffer_.size())) {
    throw Error(absl::StrCat("array view: a ", dtype_.name(), " array of shape ", shape_str(shape_), ", strides ",
                             shape_str(strides_), " and offset ", offset_, " reaches outside the buffer of ",
                             buffer_.size(), " bytes"));
  }
}

std::pair<int64_t, int64_t> NDArray::byte_span() const {
  if (size() == 0) return {offset_, offset_};
  int64_t first = offset_;
  int64_t last = offset_;
  for (size_t a = 0; a < shape_.size(); ++a) {
    const int64_t reach = (shape_[a] - 1) * strides_[a];  // checked to fit when the view was made
    (reach < 0 ? first : last) += reach;
  }
  return {first, last + static_cast<int64_t>(dtype_.itemsize())};
}

Strides NDArray::c_strides(const Shape& shape, size_t itemsize) {
  Strides s(shape.size());
  int64_t step = static_cast<int64_t>(itemsize);
  for (size_t i = shape.size(); i-- > 0;) {
    s[i] = step;
    step *= std::max<int64_t>(1, shape[i]);
  }
  return s;
}

Strides NDArray::f_strides(const Shape& shape, size_t itemsize) {
  Strides s(shape.size());
  int64_t step = static_cast<int64_t>(itemsize);
  for (size_t i = 0; i < shape.size(); ++i) {
    s[i] = step;
    step *= std::max<int64_t>(1, shape[i]);
  }
  return s;
}

static NDArray make(DType dtype, Shape shape, Order order, bool zero) {
  const size_t nbytes = array_nbytes(dtype, shape);
  Strides strides = order == Order::C ? NDArray::c_strides(shape, dtype.itemsize())
                                      : NDArray::f_strides(shape, dtype.itemsize());
  return NDArray(Buffer::allocate(nbytes, zero), dtype, std::move(shape),
                 std::move(strides), 0);
}

NDArray NDArray::empty(DType dtype, Shape shape, Order order) { return make(dtype, std::move(shape), order, false); }
NDArray NDArray::zeros(DType dtype, Shape shape, Order order) { return make(dtype, std::move(shape), order, true); }
NDArray NDArray::full(DType dtype, Shape shape, const Scalar& value, Order order) {
  NDArray out = make(dtype, std::move(shape), order, false);
  out.fill(value);
  return out;
}

NDArray NDArray::from_bytes(DType dtype, Shape shape, const void* data, size_t count) {
  NDArray out = make(dtype, std::move(shape), Order::C, false);
  if (static_cast<size_t>(out.size()) != count) {
    throw Error(absl::StrCat("from_vector: shape ", shape_str(out.shape_), " holds ", out.size(),
                             " elements, found ", count, " values"));
  }
  if (count > 0) std::memcpy(out.data(), data, count * dtype.itemsize());
  return out;
}

int64_t NDArray::size() const {
  int64_t n = 1;
  for (int64_t e : shape_) n *= e;
  return n;
}

bool NDArray::is_c_contiguous() const { return contiguous(shape_, strides_, dtype_.itemsize(), true); }
bool NDArray::is_f_contiguous() const { return contiguous(shape_, strides_, dtype_.itemsize(), false); }

std::byte* NDArray::element(const std::vector<int64_t>& index) const {
  if (index.size() != ndim()) {
    throw Error(absl::StrCat("element: expected ", ndim(), " indices for ", describe(), ", found ", index.size()));
  }
  int64_t off = offset_;
  for (size_t a = 0; a < index.size(); ++a) {
    int64_t i = index[a] < 0 ? index[a] + shape_[a] : index[a];
    if (i < 0 || i >= shape_[a]) {
      throw Error(absl::StrCat("element: index ", index[a], " is out of range for axis ", a, " of ", describe()));
    }
    off += i * strides_[a];
  }
  return buffer_.data() + off;
}

NDArray NDArray::slice(const std::vector<Slice>& slices) const {
  if (slices.size() > ndim()) {
    throw Error(absl::StrCat("slice: ", slices.size(), " slices given for ", describe(), " with ", ndim(), " axes"));
  }
  Shape shape;
  Strides strides;
  int64_t offset = offset_;
  bool empty = false;
  for (size_t a = 0; a < ndim(); ++a) {
    const Slice s = a < slices.size() ? slices[a] : Slice::all();
    const int64_t n = shape_[a];
    if (s.drop_axis) {
      int64_t i = s.start.value_or(0);
      if (i < 0) i += n;
      if (i < 0 || i >= n) {
        throw Error(absl::StrCat("slice: index ", s.start.value_or(0), " is out of range for axis ", a, " of ",
                                 describe()));
      }
      offset += i * strides_[a];
      continue;
    }
    if (s.step == 0) throw Error(absl::StrCat("slice: the step of axis ", a, " is 0; expected a nonzero step"));
    // Python's slice.indices(n).
    auto resolve = [&](std::optional<int64_t> v, int64_t fallback) {
      if (!v) return fallback;
      int64_t x = *v < 0 ? *v + n : *v;
      return s.step > 0 ? std::clamp<int64_t>(x, 0, n) : std::clamp<int64_t>(x, -1, n - 1);
    };
    const int64_t start = resolve(s.start, s.step > 0 ? 0 : n - 1);
    const int64_t stop = resolve(s.stop, s.step > 0 ? n : -1);
    int64_t len = s.step > 0 ? (stop - start + s.step - 1) / s.step : (start - stop - s.step - 1) / -s.step;
    len = std::max<int64_t>(0, len);
    if (len == 0) empty = true;
    else offset += start * strides_[a];
    shape.push_back(len);
    strides.push_back(strides_[a] * s.step);
  }
  return NDArray(buffer_, dtype_, std::move(shape), std::move(strides), empty ? offset_ : offset);
}

NDArray NDArray::transpose() const {
  std::vector<size_t> axes(ndim());
  for (size_t i = 0; i < axes.size(); ++i) axes[i] = ndim() - 1 - i;
  return transpose(axes);
}

NDArray NDArray::transpose(const std::vector<size_t>& axes) const {
  std::vector<bool> seen(ndim(), false);
  bool ok = axes.size() == ndim();
  for (size_t a : axes) {
    if (!ok || a >= ndim() || seen[a]) ok = false;
    else seen[a] = true;
  }
  if (!ok) {
    throw Error(absl::StrCat("transpose: expected a permutation of the ", ndim(), " axes of ", describe(),
                             ", found (", absl::StrJoin(axes, ", "), ")"));
  }
  Shape shape;
  Strides strides;
  for (size_t a : axes) {
    shape.push_back(shape_[a]);
    strides.push_back(strides_[a]);
  }
  return NDArray(buffer_, dtype_, std::move(shape), std::move(strides), offset_);
}

NDArray NDArray::reshape(Shape shape) const {
  if (array_nbytes(dtype_, shape) != nbytes()) {
    throw Error(absl::StrCat("reshape: cannot reshape ", describe(), " into shape ", shape_str(shape)));
  }
  if (!is_c_contiguous()) {
    throw Error(absl::StrCat("reshape: ", describe(), " is not C-contiguous; copy() it first"));
  }
  Strides strides = c_strides(shape, dtype_.itemsize());
  return NDArray(buffer_, dtype_, std::move(shape), std::move(strides), offset_);
}

NDArray NDArray::copy(Order order) const {
  NDArray out = empty(dtype_, shape_, order);
  out.assign(*this);
  return out;
}

NDArray NDArray::astype(DType dtype) const {
  if (dtype == dtype_) return copy();
  NDArray out = empty(dtype, shape_);
  const bool flat = is_c_contiguous() && reinterpret_cast<uintptr_t>(data()) % dtype_.itemsize() == 0;
  dispatch(dtype_, [&]<class S>() {
    dispatch(dtype, [&]<class D>() {
      if (flat) {  // one Eigen expression over both blocks (bench/algebra's astype row)
        const auto n = static_cast<Eigen::Index>(size());
        TensorMap<D, 1>(out.data<D>(), n) =
            converted<D, S>(TensorMap<const S, 1>(reinterpret_cast<const S*>(data()), n));
        return;
      }
      detail::for_each_row<2>(shape_, {out.data(), data()}, {&out.strides_, &strides_},
                              [](auto p, int64_t count, auto inner) {
                                for (int64_t j = 0; j < count; ++j) {
                                  S v;
                                  std::memcpy(&v, p[1] + j * inner[1], sizeof(S));
                                  D w = convert<D>(v);
                                  std::memcpy(p[0] + j * inner[0], &w, sizeof(D));
                                }
                              });
    });
  });
  return out;
}

namespace {

// Copies of at least this many bytes in all write rows with non-temporal
// stores: the destination is too large to stay in the cache anyway, and a
// plain store first reads each destination line (a third more memory
// traffic; bench/rechunk's strided copies show the difference). glibc's
// memcpy streams only single calls larger than most of the cache, which rows
// never are.
constexpr size_t kStreamCopyBytes = size_t{256} << 10;

void copy_row(std::byte* dst, const std::byte* src, size_t n, bool stream) {
#if defined(__SSE2__)
  if (stream && n >= 256) {
    const size_t head = (16 - reinterpret_cast<uintptr_t>(dst) % 16) % 16;
    std::memcpy(dst, src, head);
    dst += head;
    src += head;
    n -= head;
    for (; n >= 64; n -= 64, dst += 64, src += 64) {
      const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src));
      const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 16));
      const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 32));
      const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 48));
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst), a);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 16), b);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 32), c);
      _mm_stream_si128(reinterpret_cast<__m128i*>(dst + 48), d);
    }
  }
#else
  (void)stream;
#endif
  std::memcpy(dst, src, n);
}

// The axes of a view ordered so that its strides are those of C-ordered
// memory of `item`-byte elements: the view is then that memory transposed (a
// permutation of its axes), and the result says how. Empty when it is no such
// view (gaps, broadcast axes, negative steps, axes of extent 1 or 0).
std::vector<int> transposed_from(const Shape& shape, const Strides& strides, size_t item) {
  std::vector<int> axes(shape.size());
  for (size_t k = 0; k < axes.size(); ++k) {
    if (shape[k] <= 1) return {};
    axes[k] = static_cast<int>(k);
  }
  std::sort(axes.begin(), axes.end(), [&](int a, int b) { return strides[a] > strides[b]; });
  auto expected = static_cast<int64_t>(item);
  for (size_t i = axes.size(); i-- > 0;) {
    if (strides[axes[i]] != expected) return {};
    expected *= shape[axes[i]];
  }
  return axes;
}

// dst (C-ordered, of `shape`) = src, a transposed view of C-ordered memory
// (transposed_from gave `axes`), as Eigen's shuffle of rank N: bench/algebra's
// transpose_copy row times it beside the element-by-element loop it replaced.
// Elements are moved as unsigned integers (or pairs of them) of their size.
template <int N>
void shuffle_copy(std::byte* dst, const std::byte* src, const Shape& shape, const std::vector<int>& axes,
                  size_t item) {
  auto run = [&]<class T>() {
    std::array<Eigen::Index, N> base, out_dims, perm{};
    for (int i = 0; i < N; ++i) {
      base[i] = shape[axes[i]];
      out_dims[i] = shape[i];
    }
    // Output axis k is axis k of the view, which is axis position(k) of `base`.
    for (int i = 0; i < N; ++i) perm[axes[i]] = i;
    TensorMap<T, N>(reinterpret_cast<T*>(dst), out_dims) =
        TensorMap<const T, N>(reinterpret_cast<const T*>(src), base).shuffle(perm);
  };
  switch (item) {
    case 1: return run.template operator()<uint8_t>();
    case 2: return run.template operator()<uint16_t>();
    case 4: return run.template operator()<uint32_t>();
    case 8: return run.template operator()<uint64_t>();
    default: return run.template operator()<std::complex<double>>();
  }
}

// Copies `src` into the C-ordered `dst` with Eigen's shuffle when src is a
// transposed view of C-ordered memory of rank 2 to 4; false when it is not one.
bool transposed_copy(std::byte* dst, const std::byte* src, const Shape& shape, const Strides& strides, size_t item) {
  if (shape.size() < 2 || shape.size() > 4 || reinterpret_cast<uintptr_t>(src) % std::min<size_t>(item, 8) != 0 ||
      reinterpret_cast<uintptr_t>(dst) % std::min<size_t>(item, 8) != 0) {
    return false;
  }
  const std::vector<int> axes = transposed_from(shape, strides, item);
  if (axes.empty()) return false;
  switch (shape.size()) {
    case 2: shuffle_copy<2>(dst, src, shape, axes, item); break;
    case 3: shuffle_copy<3>(dst, src, shape, axes, item); break;
    default: shuffle_copy<4>(dst, src, shape, axes, item); break;
  }
  return true;
}

// Orders streamed stores before whatever follows (another thread may read the
// destination once the task that wrote it is done).
void store_fence() {
#if defined(__SSE2__)
  _mm_sfence();
#endif
}

}  // namespace

void NDArray::assign(const NDArray& src) const {
  if (src.dtype_ != dtype_ || src.shape_ != shape_) {
    throw Error(absl::StrCat("assign: expected a ", describe(), ", found a ", src.describe()));
  }
  if (!writable()) throw Error(absl::StrCat("assign: the ", describe(), " is read-only"));
  const size_t item = dtype_.itemsize();
  if (is_c_contiguous() && src.is_c_contiguous()) {
    if (nbytes() > 0) detail::guard_mapped_reads([&] { std::memmove(data(), src.data(), nbytes()); });
    return;
  }
  if (is_c_contiguous() && nbytes() > 0) {
    bool done = false;
    detail::guard_mapped_reads([&] { done = transposed_copy(data(), src.data(), shape_, src.strides_, item); });
    if (done) return;
  }
  const bool stream = nbytes() >= kStreamCopyBytes;
  // Either side may be a mapped file that shrinks under the copy: the guard
  // turns its SIGBUS into a StorageError naming the file.
  detail::guard_mapped_reads([&] {
    detail::for_each_row<2>(shape_, {data(), src.data()}, {&strides_, &src.strides_},
                            [item, stream](auto p, int64_t count, auto inner) {
                              const auto width = static_cast<int64_t>(item);
                              if (inner[0] == width && inner[1] == width) {
                                copy_row(p[0], p[1], static_cast<size_t>(count) * item, stream);
                                return;
                              }
                              for (int64_t j = 0; j < count; ++j)
                                std::memcpy(p[0] + j * inner[0], p[1] + j * inner[1], item);
                            });
  });
  if (stream) store_fence();
}

void NDArray::fill(const Scalar& value) const {
  if (!writable()) throw Error(absl::StrCat("fill: the ", describe(), " is read-only"));
  dispatch(dtype_, [&]<class T>() {
    const T v = value.to<T>();
    detail::for_each_row<1>(shape_, {data()}, {&strides_}, [&v](auto p, int64_t count, auto inner) {
      for (int64_t j = 0; j < count; ++j) std::memcpy(p[0] + j * inner[0], &v, sizeof(T));
    });
  });
}

std::string NDArray::describe() const { return absl::StrCat(dtype_.name(), " array of shape ", shape_str(shape_)); }

void NDArray::check_access(DType wanted, bool read_only) const {
  if (wanted != dtype_) {
    throw TypeError(absl::StrCat("expected elements of type ", wanted.name(), ", found a ", describe()));
  }
  if (!read_only && !writable()) {
    throw Error(absl::StrCat("the ", describe(), " is read-only (a read-only mapping); ask for const ",
                             wanted.name(), " elements"));
  }
}

void NDArray::check_tensor(DType wanted, int rank, bool read_only) const {
  if (rank != static_cast<int>(ndim())) {
    throw TypeError(absl::StrCat("tensor: expected rank ", rank, ", found a ", describe(), " (rank ", ndim(), ")"));
  }
  check_access(wanted, read_only);
  if (!is_c_contiguous()) {
    throw Error(absl::StrCat("tensor: the ", describe(), " with strides ", shape_str(strides_),
                             " is not C-contiguous; copy() it first",
                             is_f_contiguous() ? " or take its transpose(), which is" : ""));
  }
  const size_t align = wanted.is_complex() ? wanted.itemsize() / 2 : wanted.itemsize();
  if (reinterpret_cast<uintptr_t>(data()) % align != 0) {
    throw Error(absl::StrCat("tensor: the ", describe(), " starts at an address not aligned to ", align,
                             " bytes; copy() it first"));
  }
}

NDArray c_contiguous(const NDArray& a) { return a.is_c_contiguous() ? a : a.copy(); }

bool array_equal(const NDArray& a, const NDArray& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  return dispatch(a.dtype(), [&]<class T>() {
    bool equal = true;
    detail::for_each_row<2>(a.shape(), {a.data(), b.data()}, {&a.strides(), &b.strides()},
                            [&](auto p, int64_t count, auto inner) {
                              for (int64_t j = 0; j < count && equal; ++j) {
                                T x, y;
                                std::memcpy(&x, p[0] + j * inner[0], sizeof(T));
                                std::memcpy(&y, p[1] + j * inner[1], sizeof(T));
                                equal = same_value(x, y);
                              }
                            });
    return equal;
  });
}

}  // namespace tessera::array
