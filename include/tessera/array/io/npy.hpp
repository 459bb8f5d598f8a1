// tessera/array/io/npy.hpp — numpy's .npy files, mapped in place.
//
// A .npy file is a short header (a Python dict literal giving the dtype, the
// shape and whether the data is in Fortran order) followed by the raw
// elements. `npy::open` checks the header and the file's size and returns an
// NDArray view of the mapped data: nothing is read until it is used, so a
// 100 GiB file opens instantly and is paged in by the blocks that touch it.
// Fortran-ordered files give views with Fortran strides. `npy::create` makes a
// file of the right size (space reserved up front) and returns a writable view
// of its data. Formats 1.0, 2.0 and 3.0 are read; 1.0 is written (2.0 when the
// header needs more than 64 KiB). Big-endian files (`>f8`) are read into
// native order (copied and swapped: they cannot be views of the file) and
// written when `save` is asked to. Truncated or garbage headers, unsupported
// dtypes (structured, strings, objects) and files of the wrong size are
// StorageErrors naming the path.
//
// @code
//   using namespace tessera::array;
//   NDArray x = npy::open("big.npy");                  // read-only view, nothing read yet
//   NDArray y = npy::create("out.npy", DType::float32(), {1000, 1000});
//   y.fill(0.5f);                                      // written through the mapping
//   npy::save("copy.npy", x);                          // any NDArray, any layout
// @endcode
#pragma once

#include <cstddef>
#include <string>

#include "tessera/array/io/mapped_file.hpp"
#include "tessera/array/core/ndarray.hpp"

namespace tessera::array::npy {

//! What a .npy header says.
struct Header {
  int major = 1;  //!< format version
  //! Format version: (1, 0), (2, 0) or (3, 0).
  int minor = 0;
  //! The element type (stored bytes are swapped into native order when read).
  DType dtype;
  //! Elements along each axis.
  Shape shape;
  //! True when the last axis varies slowest.
  bool fortran_order = false;
  bool big_endian = false;  //!< the file's elements are big-endian
  size_t data_offset = 0;  //!< where the elements start in the file
};

//! Reads and checks the header of `path`, and that the file holds exactly the
//! data it promises. StorageError when the file is not a readable .npy file of a
//! supported dtype, or is shorter or longer than its header says.
Header read_header(const std::string& path);

//! Parses a header from the first `size` bytes of a file; `path` names it in errors.
Header parse_header(const std::byte* data, size_t size, const std::string& path);

//! Maps `path` and returns a view of its elements (read-only unless `access` is
//! ReadWrite, in which case writes go to the file). StorageError when the header is
//! bad or the file's size is not the header's offset plus the elements' size. A
//! big-endian file gives a native-order copy (StorageError with ReadWrite).
NDArray open(const std::string& path, Access access = Access::ReadOnly);

//! A native-order copy of `big_endian`, a view of big-endian elements.
NDArray to_native(const NDArray& big_endian);

//! Creates `path` (replacing any file there) for a `dtype` array of `shape`, in C
//! order or Fortran order, and returns a writable view of its (zeroed) elements.
NDArray create(const std::string& path, DType dtype, const Shape& shape, bool fortran_order = false);

//! Writes `array` to `path` as a C-ordered .npy file, big-endian (`>f8`) when asked.
void save(const std::string& path, const NDArray& array, bool big_endian = false);

}  // namespace tessera::array::npy
