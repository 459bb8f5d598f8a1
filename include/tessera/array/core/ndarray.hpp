// tessera/array/core/ndarray.hpp — one block of an array: a strided view over shared bytes.
//
// An NDArray is what numpy's ndarray is, reduced to what tessera needs: a dtype,
// a shape, byte strides, a byte offset, and a Buffer it shares with every view
// of the same memory. The Buffer is 64-byte-aligned heap memory or a region of
// a MappedFile (it keeps the mapping alive), so a block of a .npy or zarr store
// is used in place, never read into memory first. Slicing (with steps) and
// transposing make views; `copy()` makes a contiguous array; `tensor<T, N>()`
// (include tessera/array/core/tensor.hpp) gives an Eigen::TensorMap in row-major
// (numpy C) order over a C-contiguous array. Fortran-order data is a view with
// Fortran strides; its transpose is C-contiguous.
//
// Under a run's memory limit an NDArray spills as its elements (Spillable
// below) and comes back as a read-only view of the mapped scratch file.
//
// Copying an NDArray copies the view, not the elements. `nbytes()` is the
// size of its elements, which a tessera::Value holding it reports to the
// scheduler's memory accounting.
//
// @code
//   using namespace tessera::array;
//   NDArray a = NDArray::zeros(DType::float64(), {4, 6});
//   NDArray b = a.slice({Slice{1, 3}, Slice{0, std::nullopt, 2}});   // a[1:3, ::2], a view
//   b.fill(1.5);                                                     // writes into a
//   NDArray c = b.copy();                                            // contiguous (2, 3)
//   double x = c.at<double>({1, 2});                                 // 1.5
// @endcode
//
// Thread-safety: const members may be called from any thread. Writes through
// views (fill, assign, a mutable tensor) must not race with other access to
// the same elements.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/scalar.hpp"
#include "tessera/graph/spill.hpp"

namespace tessera::array {

//! Byte distance between neighbours along each axis (numpy's `strides`; may be negative).
using Strides = std::vector<int64_t>;

//! Memory order of a new array: C (last axis fastest) or Fortran (first axis fastest).
enum class Order { C, F };

//! Bytes shared by NDArray views: heap memory or a mapped-file region, kept alive
//! as long as any view holds it.
class Buffer {
 public:
  //! No bytes.
  Buffer() = default;
  //! Wraps `size` bytes at `data`; `data`'s owner (through shared_ptr aliasing) keeps them alive.
  Buffer(std::shared_ptr<std::byte> data, size_t size, bool writable)
      : data_(std::move(data)), size_(size), writable_(writable) {}
  //! `size` bytes of fresh 64-byte-aligned memory, zeroed when `zero` is true:
  //! from the heap, oneTBB's scalable allocator from 2 MiB, and anonymous pages
  //! with transparent huge pages requested above 64 MiB; a few of those freed
  //! are kept (the kernel may reclaim their pages) for the next of about their size.
  static Buffer allocate(size_t size, bool zero = false);
  //! Returns the kept buffers (see allocate) to the kernel now, so they no longer
  //! counts in the process's RSS: before measuring memory, or forking a child
  //! whose peak RSS counts the parent's. Thread-safe.
  //! @code
  //!   tessera::array::Buffer::release_kept();
  //! @endcode
  static void release_kept();

  //! The first byte.
  std::byte* data() const { return data_.get(); }
  //! Bytes held.
  size_t size() const { return size_; }
  //! False for a read-only mapping: writing through such a view is refused.
  bool writable() const { return writable_; }
  //! How many holders share the bytes (for tests of lifetime).
  long use_count() const { return data_.use_count(); }
  //! The bytes as one more holder of them, for code that keeps a `shared_ptr`
  //! rather than a Buffer (a received message, an array's serialized parts).
  const std::shared_ptr<std::byte>& shared() const { return data_; }

 private:
  std::shared_ptr<std::byte> data_;
  size_t size_ = 0;
  bool writable_ = false;
};

//! One axis of a slice, as Python writes `start:stop:step` (negative start/stop
//! count from the end; a negative step walks backwards), or `Slice::index(i)`,
//! which picks one position and drops the axis.
struct Slice {
  //! The whole axis (`:`).
  Slice() = default;
  //! `start:stop:step`; `Slice{2}` is `2:`, `Slice{std::nullopt, std::nullopt, -1}` is `::-1`.
  Slice(std::optional<int64_t> start, std::optional<int64_t> stop = std::nullopt, int64_t step = 1)  // NOLINT
      : start(start), stop(stop), step(step) {}
  //! The whole axis (`:`).
  static Slice all() { return {}; }
  //! One position; the axis disappears from the result.
  static Slice index(int64_t i) {
    Slice s(i);
    s.drop_axis = true;
    return s;
  }

  //! First index (None: from the start, or the end for a negative step).
  std::optional<int64_t> start;
  //! One past the last index (None: to the end, or the start for a negative step).
  std::optional<int64_t> stop;
  //! Distance between taken indices; not 0.
  int64_t step = 1;
  //! True for an integer index (Slice::index): the axis is dropped.
  bool drop_axis = false;
};

//! One block: a dtype, a shape, byte strides and the storage they view (heap memory or a mapped file).
class NDArray {
 public:
  //! An empty handle: `has_value()` is false. Other members need a value.
  NDArray() = default;
  //! A view of `buffer`: element (i0, i1, ...) lives at byte
  //! `offset + sum(ik * strides[k])`. Throws Error when shape and strides differ
  //! in length, an extent is negative, or an element would fall outside the buffer.
  NDArray(Buffer buffer, DType dtype, Shape shape, Strides strides, int64_t offset);

  //! A new array of uninitialized 64-byte-aligned memory.
  static NDArray empty(DType dtype, Shape shape, Order order = Order::C);
  //! A new array of zeros.
  static NDArray zeros(DType dtype, Shape shape, Order order = Order::C);
  //! A new array with every element `value` (converted to `dtype`; TypeError when it cannot be).
  static NDArray full(DType dtype, Shape shape, const Scalar& value, Order order = Order::C);
  //! A new C-ordered array holding a copy of `values` (their count must equal the shape's size).
  template <Element T>
  static NDArray from_vector(const std::vector<T>& values, Shape shape);

  //! The C-order byte strides of a contiguous array.
  static Strides c_strides(const Shape& shape, size_t itemsize);
  //! The Fortran-order byte strides of a contiguous array.
  static Strides f_strides(const Shape& shape, size_t itemsize);

  //! False for a default-made NDArray, which views nothing.
  bool has_value() const { return buffer_.data() != nullptr; }
  //! The element type.
  DType dtype() const { return dtype_; }
  //! Number of axes.
  size_t ndim() const { return shape_.size(); }
  //! Elements along each axis.
  const Shape& shape() const { return shape_; }
  //! Bytes between neighbours along each axis (may be negative).
  const Strides& strides() const { return strides_; }
  //! Byte offset of element (0, ..., 0) in the buffer.
  int64_t offset() const { return offset_; }
  //! The storage the view points into.
  const Buffer& buffer() const { return buffer_; }
  //! Number of elements (1 for a 0-d array).
  int64_t size() const;
  //! Bytes of the elements: size() * itemsize. A Value holding the array reports this.
  size_t nbytes() const { return static_cast<size_t>(size()) * dtype_.itemsize(); }
  //! False when the storage is a read-only mapping.
  bool writable() const { return buffer_.writable(); }
  //! Elements laid out in C order with no gaps (axes of extent 1 may have any stride).
  bool is_c_contiguous() const;
  //! Elements laid out in Fortran order with no gaps.
  bool is_f_contiguous() const;

  //! Address of element (0, ..., 0).
  std::byte* data() const { return buffer_.data() + offset_; }
  //! The same, typed; throws TypeError when T is not the dtype, Error when T is
  //! not const and the array is read-only.
  template <Element T>
  T* data() const {
    check_access(dtype_of<T>, std::is_const_v<T>);
    return reinterpret_cast<T*>(data());
  }
  //! The bytes [first, end) of the buffer that the elements occupy, from the
  //! buffer's start ({offset, offset} when there are none).
  std::pair<int64_t, int64_t> byte_span() const;
  //! Address of one element; throws Error for the wrong number of indices or one
  //! out of range (negative indices count from the end).
  std::byte* element(const std::vector<int64_t>& index) const;
  //! One element's value; throws TypeError when T is not the dtype.
  template <Element T>
  std::remove_cv_t<T> at(const std::vector<int64_t>& index) const {
    check_access(dtype_of<T>, true);
    std::remove_cv_t<T> value;
    std::memcpy(&value, element(index), sizeof(value));  // views may be unaligned
    return value;
  }

  //! A view of `a[s0, s1, ...]`; axes past the slices given are taken whole.
  //! Throws Error for more slices than axes, a zero step, or an index out of range.
  NDArray slice(const std::vector<Slice>& slices) const;
  //! A view with the axes reversed (a Fortran-ordered array becomes C-ordered).
  NDArray transpose() const;
  //! A view whose axis i is this array's axis `axes[i]`; Error unless `axes` is a permutation.
  NDArray transpose(const std::vector<size_t>& axes) const;
  //! A view with a new shape over the same elements; needs a C-contiguous array and
  //! the same size (Error otherwise).
  NDArray reshape(Shape shape) const;
  //! A new contiguous array with the same elements, in `order`.
  NDArray copy(Order order = Order::C) const;
  //! A new C-ordered array of the elements converted to `dtype` (as numpy's astype,
  //! unchecked: out-of-range values wrap or saturate as C++ casts do).
  NDArray astype(DType dtype) const;

  //! Copies `src`'s elements into this array; shapes and dtypes must match (Error
  //! otherwise) and this array must be writable. The two must not overlap.
  void assign(const NDArray& src) const;
  //! Sets every element to `value` (converted to the dtype; TypeError when it cannot be).
  void fill(const Scalar& value) const;

  //! An Eigen::TensorMap of rank N over the elements, row-major like numpy's C order.
  //! T must be the dtype's C++ type, `const T` for read-only access. Throws
  //! TypeError for another type or rank, Error for a view that is not C-contiguous,
  //! not aligned to its element type, or (T not const) a read-only array. Defined in tessera/array/core/tensor.hpp.
  //! @code
  //!   auto t = a.tensor<const double, 2>();   // Eigen::TensorMap<const Tensor<double, 2, RowMajor>>
  //!   double s = Eigen::Tensor<double, 0, Eigen::RowMajor>(t.sum())();
  //! @endcode
  template <class T, int N>
  auto tensor() const;

  //! Short description for messages: `float64 array of shape (3, 4)`.
  std::string describe() const;

 private:
  static NDArray from_bytes(DType dtype, Shape shape, const void* data, size_t count);
  void check_access(DType wanted, bool read_only) const;
  void check_tensor(DType wanted, int rank, bool read_only) const;

  Buffer buffer_;
  DType dtype_;
  Shape shape_;
  Strides strides_;
  int64_t offset_ = 0;
};

//! Bytes of a `dtype` array of `shape`; throws Error for a negative extent or
//! more than 2^63 - 1 bytes (so sizes read from files cannot overflow).
size_t array_nbytes(DType dtype, const Shape& shape);

//! True when both have the same dtype, shape and elements (NaN equals NaN).
bool array_equal(const NDArray& a, const NDArray& b);

//! `a` itself when it is C-contiguous, else a C-ordered copy: what a strided
//! view needs before `tensor<T, N>()` maps it.
NDArray c_contiguous(const NDArray& a);

template <Element T>
NDArray NDArray::from_vector(const std::vector<T>& values, Shape shape) {
  static_assert(!std::is_same_v<T, bool>, "std::vector<bool> is packed: use std::vector<uint8_t> and astype");
  return from_bytes(dtype_of<T>, std::move(shape), values.data(), values.size());
}

}  // namespace tessera::array

namespace tessera {

//! NDArray results spill as a small header and their elements in C order, and
//! come back as a read-only view of the mapped scratch file: no copy.
template <>
struct Spillable<array::NDArray> {
  //! Writes the header and the elements.
  static void serialize(const array::NDArray& a, SpillWriter& w);
  //! A read-only view of the elements where the reader maps, a copy otherwise.
  static array::NDArray deserialize(SpillReader& r);
};

}  // namespace tessera
