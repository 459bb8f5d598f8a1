// tessera/array/io/zarr.hpp — zarr v2 and v3 directory stores: compressed,
// sharded, big-endian or raw, inside groups.
//
// A zarr array is a directory holding its metadata (`.zarray` in v2,
// `zarr.json` in v3: shape, chunk shape, dtype, fill value, codecs) and one
// file per chunk named by its block index (`1.2`, `1/2` or v3's `c/1/2`). A
// chunk is encoded by a pipeline: its elements laid out in C, Fortran or a
// transposed order, in little- or big-endian bytes, then compressed (blosc,
// zstd, zlib, gzip, lz4, bz2, lzma), checksummed (crc32c) or filtered (v2's
// delta and fixedscaleoffset). A v3 array may be sharded: each chunk file (a
// shard) holds many inner chunks and an index of them.
//
// Raw chunks (no codec, little-endian) are mapped and used in place; the
// others are decoded into fresh memory by whoever calls `read_chunk` (in
// `from_zarr`, the block's own task, so decoding runs on every worker). A
// chunk that was never written reads as the fill value; a chunk whose bytes do
// not decode is a StorageError naming the chunk and the path, never zeros.
//
// Metadata is checked when the store is opened: unknown codecs, overflowing
// shapes, absurd chunk counts and malformed fields are StorageErrors naming
// the metadata file. Every file is hostile until checked: metadata must be a
// regular file of at most 16 MiB, nested at most 32 deep (counted before it
// is parsed); a chunk or shard file must be a regular file no bigger than the
// most its codecs make of one chunk (each codec's documented worst case in
// turn). A FIFO or a device in a file's place is refused, never waited on.
//
// @code
//   using namespace tessera::array;
//   auto z = zarr::create("out.zarr", DType::float64(), {1000, 1000}, {256, 256}, 0.0,
//                         {.zarr_format = 3, .codec = "zstd:3", .inner_chunks = {64, 64}});
//   z.write_chunk({0, 3}, block);          // block: a float64 array of shape (256, 232)
//   NDArray b = z.read_chunk({3, 3});      // (232, 232): decoded, or the fill value
//   auto y = zarr::open("data.zarr/group/var");   // what zarr-python wrote
//   y.chunks();                            // ((256, 256, 256, 232), (256, 256, 256, 232))
// @endcode
//
// Thread-safety: a Store is immutable; its const members may be called from
// many threads at once, each writing different chunks.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"
#include "tessera/array/io/mapped_file.hpp"

namespace tessera::array::zarr {

namespace detail {
class ChunkCodec;
}

//! What the array's metadata says.
struct Metadata {
  //! 2 or 3.
  int zarr_format = 2;
  //! Elements along each axis.
  Shape shape;
  //! The chunk grid's chunk shape (a shard's shape when sharded).
  Shape chunk_shape;
  //! The inner chunks of a sharded v3 array; empty otherwise.
  Shape inner_chunk_shape;
  //! The element type, in native byte order.
  DType dtype;
  //! The stored byte order (elements are swapped into native order when read).
  bool big_endian = false;
  //! None (JSON null, v2 only): missing chunks read as zeros.
  std::optional<Scalar> fill_value;
  //! v2: element order inside each chunk.
  Order order = Order::C;
  //! v2: '.' (chunk files `1.2`) or '/' (`1/2`); v3: the chunk key encoding's separator.
  char dimension_separator = '.';
  //! v3: chunk_key_encoding "v2" (`1.2`, no `c/` prefix) rather than "default".
  bool v2_chunk_keys = false;
  //! v3: the axes' names ("" for an unnamed axis); empty when the metadata has none.
  std::vector<std::string> dimension_names;
  //! The codecs as the metadata writes them (JSON): v2 `{"compressor": ..., "filters": ...}`, v3 the `codecs` list.
  std::string codecs_json;
};

//! How `create` encodes chunks.
struct Format {
  //! 2 (`.zarray`) or 3 (`zarr.json`).
  int zarr_format = 2;
  //! "none", or a codec spec: "blosc:zstd:5:bitshuffle", "zstd:3", "gzip:6", "lz4", "bz2:9", "lzma:6"
  //! (v3 takes none, blosc, zstd and gzip).
  std::string codec = "none";
  //! v3 only: shard the chunks into inner chunks of this shape (each must divide the chunk).
  Shape inner_chunks = {};
  //! v2 only: filters applied before the compressor, in order: "delta[:ASTYPE]",
  //! "fixedscaleoffset:OFFSET:SCALE[:ASTYPE]" (ASTYPE a numpy type string such as "<i2").
  std::vector<std::string> filters = {};
};

//! One zarr array (v2 or v3) on disk: its metadata, chunk grid and codecs; reads and writes chunks.
class Store {
 public:
  //! Raw chunks of at least this many bytes are mapped by read_chunk; smaller ones are read.
  static constexpr size_t kMapChunkBytes = size_t{1} << 20;

  //! Over the array at `path` described by `metadata` (open and create make these).
  Store(std::string path, Metadata metadata, Access access);

  //! The store's directory.
  const std::string& path() const { return path_; }
  //! What the metadata says.
  const Metadata& metadata() const { return meta_; }
  //! The element type.
  DType dtype() const { return meta_.dtype; }
  //! Elements along each axis.
  const Shape& shape() const { return meta_.shape; }
  //! The chunk grid's chunk shape (a shard's shape when sharded).
  const Shape& chunk_shape() const { return meta_.chunk_shape; }
  //! True when opened for writing.
  bool writable() const { return access_ == Access::ReadWrite; }
  //! The array's chunks: chunk_shape along each axis, the last block trimmed to the shape.
  const Chunks& chunks() const { return chunks_; }
  //! True when chunks are stored raw (no codec, little-endian): read_chunk maps them in place.
  bool raw() const;
  //! One line per codec of the pipeline (layout, byte order, compressors...), for `tessera info`.
  std::vector<std::string> describe_codecs() const;

  //! The chunk's key: `1.2`, `1/2`, v3's `c/1/2`; `0` (v3: `c`) for a 0-d array.
  std::string chunk_key(const std::vector<int64_t>& block) const;
  //! The chunk file's path.
  std::string chunk_path(const std::vector<int64_t>& block) const;
  //! True when the chunk's file exists.
  bool has_chunk(const std::vector<int64_t>& block) const;

  //! The block's elements (the chunk trimmed to the array's edge): a view of the
  //! mapped chunk file for raw chunks (read-only unless opened read-write), the
  //! decoded chunk otherwise, or a new array of the fill value when the chunk has
  //! no file. StorageError naming the chunk and the file when its bytes do not
  //! decode (or a raw file has the wrong size); ChunkError for a block index out of range.
  //! Small raw chunks (under kMapChunkBytes) are read into fresh memory instead:
  //! mapping one costs more than reading it.
  NDArray read_chunk(const std::vector<int64_t>& block) const;
  //! Writes the block's elements into `out` (the block's shape and the store's
  //! dtype, writable, any strides; Error otherwise), decoding straight into it
  //! where the stored layout allows: how `compute()` reads a store into one array.
  //! Errors as read_chunk.
  void read_into(const std::vector<int64_t>& block, const NDArray& out) const;
  //! Raw stores only: creates the chunk's file (replacing any), full-size and
  //! filled with the fill value, and returns a writable view of the block's
  //! elements in it, so a store task writes the block straight into the file.
  //! StorageError for a read-only or encoded store.
  NDArray map_chunk(const std::vector<int64_t>& block) const;
  //! Encodes `data` (the block's shape and the store's dtype; Error otherwise) and
  //! writes it as the chunk's file, through a temporary file renamed into place.
  void write_chunk(const std::vector<int64_t>& block, const NDArray& data) const;

 private:
  //! Decodes the block's chunk file into `chunk` (the full chunk shape); false when it has no file.
  bool decode_file(const std::vector<int64_t>& block, const NDArray& chunk) const;
  NDArray full_chunk(Buffer bytes) const;
  NDArray view_of(const std::vector<int64_t>& block, Buffer bytes) const;
  bool fill_is_zero() const;
  size_t chunk_nbytes() const;

  std::string path_;
  Metadata meta_;
  Access access_;
  Chunks chunks_;
  std::shared_ptr<const detail::ChunkCodec> codec_;
};

//! Opens the zarr array in directory `path`: v2 (`.zarray`) or v3 (`zarr.json`),
//! also an array inside a group (`data.zarr/group/var`), found through a
//! consolidated `.zmetadata` of an enclosing group when the array has no
//! metadata file of its own. StorageError when there is no array there (a group
//! says so and lists its members), or the metadata is malformed, names an
//! unsupported codec or dtype, or describes more chunks or bytes than can exist.
Store open(const std::string& path, Access access = Access::ReadOnly);

//! Creates a zarr array in directory `path` (created; it must not hold an array
//! already) in C order with `fill_value` (std::nullopt writes null; v3 needs a
//! value) and `format`'s version and codecs. ChunkError for bad chunk sizes,
//! CodecSpecError for a bad codec spec, ValueError for a bad format.
Store create(const std::string& path, DType dtype, const Shape& shape, const Shape& chunk_shape,
             std::optional<Scalar> fill_value = Scalar(0), const Format& format = {});

//! Parses `.zarray` text; `path` names it in errors.
Metadata parse_metadata(const std::string& text, const std::string& path);
//! Parses a v3 array's `zarr.json` text; `path` names it in errors.
Metadata parse_metadata_v3(const std::string& text, const std::string& path);
//! The metadata file's text for `metadata` (`.zarray` for v2, `zarr.json` for v3).
std::string format_metadata(const Metadata& metadata);

//! One member of a group hierarchy.
struct Node {
  //! Relative to the root ("" for the root itself), '/'-separated.
  std::string path;
  //! True for a group, false for an array.
  bool is_group = false;
  //! 2 or 3.
  int zarr_format = 2;
};

//! True when `path` holds a zarr group (`.zgroup`, or a v3 `zarr.json` whose node_type is group).
bool is_group(const std::string& path);
//! The hierarchy under `path` (a group or an array), the root first, then its
//! members depth-first in name order. Walks iteratively; a directory reached
//! twice (a symbolic link to itself or to a parent) is listed once, under its
//! first name; refuses (StorageError) past 64 levels or 1,000,000 nodes.
std::vector<Node> walk(const std::string& path);
//! Creates an empty group at `path` (`.zgroup` or a v3 `zarr.json`).
void create_group(const std::string& path, int zarr_format = 2);

}  // namespace tessera::array::zarr
