// tessera/array/io/zarr.hpp — zarr v2 directory stores, chunk files mapped in place.
//
// A zarr v2 array is a directory holding a `.zarray` JSON file (shape, chunk
// shape, dtype, fill value, compressor, order) and one file per chunk named by
// its block index, `i.j.k`. tessera reads and writes the uncompressed form:
// each chunk file is the chunk's raw elements, edge chunks stored full-size as
// zarr stores them, so a chunk is mapped and used in place. A chunk that was
// never written has no file and reads as the fill value. Compressed arrays and
// arrays with filters are refused with a StorageError naming the codec.
//
// @code
//   using namespace tessera::array;
//   auto z = zarr::create("out.zarr", DType::float64(), {1000, 1000}, {256, 256}, 0.0);
//   z.write_chunk({0, 3}, block);          // block: a float64 array of shape (256, 232)
//   NDArray b = z.read_chunk({3, 3});      // (232, 232): mapped, or the fill value
//   auto y = zarr::open("data.zarr");      // what python3-zarr wrote, compressor=None
//   y.chunks();                            // ((256, 256, 256, 232), (256, 256, 256, 232))
// @endcode
//
// Thread-safety: a Store is immutable; its const members may be called from
// many threads at once, each writing different chunks.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/io/mapped_file.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"

namespace tessera::array::zarr {

//! What `.zarray` says, for the uncompressed arrays tessera handles.
struct Metadata {
  Shape shape;
  Shape chunk_shape;
  DType dtype;
  //! None (JSON null): missing chunks read as zeros.
  std::optional<Scalar> fill_value;
  //! Element order inside each chunk file.
  Order order = Order::C;
  //! '.' (chunk files `1.2`) or '/' (nested folders `1/2`).
  char dimension_separator = '.';
};

class Store {
 public:
  Store(std::string path, Metadata metadata, Access access);

  //! The store's directory.
  const std::string& path() const { return path_; }
  const Metadata& metadata() const { return meta_; }
  DType dtype() const { return meta_.dtype; }
  const Shape& shape() const { return meta_.shape; }
  const Shape& chunk_shape() const { return meta_.chunk_shape; }
  bool writable() const { return access_ == Access::ReadWrite; }
  //! The array's chunks: chunk_shape along each axis, the last block trimmed to the shape.
  const Chunks& chunks() const { return chunks_; }

  //! The chunk's key: `1.2`, `1/2` with '/' separators, `0` for a 0-d array.
  std::string chunk_key(const std::vector<int64_t>& block) const;
  //! The chunk file's path.
  std::string chunk_path(const std::vector<int64_t>& block) const;
  //! True when the chunk's file exists.
  bool has_chunk(const std::vector<int64_t>& block) const;

  //! The block's elements (the chunk trimmed to the array's edge): a view of the
  //! mapped chunk file, read-only unless the store was opened read-write, or a new
  //! array of the fill value when the chunk has no file. StorageError when the file
  //! has the wrong size; ChunkError for a block index out of range.
  NDArray read_chunk(const std::vector<int64_t>& block) const;
  //! Creates the chunk's file (replacing any), full-size and filled with the fill value,
  //! and returns a writable view of the block's elements in it: a store task writes
  //! the block straight into the file. StorageError for a read-only store.
  NDArray map_chunk(const std::vector<int64_t>& block) const;
  //! Writes `data` (the block's shape and the store's dtype; Error otherwise) as the
  //! chunk's file, through a temporary file renamed into place.
  void write_chunk(const std::vector<int64_t>& block, const NDArray& data) const;

 private:
  NDArray full_chunk(Buffer bytes) const;
  NDArray view_of(const std::vector<int64_t>& block, Buffer bytes) const;
  bool fill_is_zero() const;
  size_t chunk_nbytes() const;

  std::string path_;
  Metadata meta_;
  Access access_;
  Chunks chunks_;
};

//! Opens the zarr v2 array in directory `path`. StorageError when `.zarray` is
//! missing, not JSON, not zarr v2, names a compressor or filters (the codec is
//! named), an unsupported dtype, or fields of the wrong type or size.
Store open(const std::string& path, Access access = Access::ReadOnly);

//! Creates a zarr v2 array in directory `path` (created; it must not hold a
//! `.zarray` already) with no compressor, C order, and `fill_value` (std::nullopt
//! writes null). Chunk sizes must be positive (ChunkError).
Store create(const std::string& path, DType dtype, const Shape& shape, const Shape& chunk_shape,
             std::optional<Scalar> fill_value = Scalar(0));

//! Parses `.zarray` text; `path` names it in errors.
Metadata parse_metadata(const std::string& text, const std::string& path);
//! The `.zarray` text for `metadata` (no compressor, no filters).
std::string format_metadata(const Metadata& metadata);

}  // namespace tessera::array::zarr
