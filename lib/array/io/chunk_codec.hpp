// How one stored zarr chunk becomes an array and back: the pipeline that both
// zarr versions share. A chunk's elements are laid out in some axis order (C,
// Fortran, or v3's `transpose`), in some byte order, then passed through
// bytes-to-bytes codecs (v2's filters and compressor, v3's codec list). v3's
// `sharding_indexed` is the other kind: a chunk made of inner chunks with an
// index, read from its file one contiguous run of needed inner chunks at a time.
//
// Both kinds are immutable and shared by every task that reads or writes.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "array/io/codecs/codec.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"

namespace tessera::array::zarr::detail {

//! An encoded chunk: the first `size` bytes of `buffer`.
struct EncodedChunk {
  Buffer buffer;
  size_t size = 0;
  codec::Bytes bytes() const { return {buffer.data(), size}; }
};

//! The bytes of one stored chunk: a file read with pread, or memory.
class ChunkSource {
 public:
  virtual ~ChunkSource() = default;
  virtual size_t size() const = 0;
  //! Reads out.size() bytes at `offset` (within size(); the caller checks).
  virtual void read(size_t offset, codec::MutableBytes out) const = 0;
  //! All the bytes, in the calling thread's scratch memory (Scratch::encoded).
  //! The result holds that buffer: a chunk past what a thread keeps gets a
  //! buffer of its own, freed when the last holder lets it go.
  virtual EncodedChunk read_all() const;
};

class ChunkCodec {
 public:
  virtual ~ChunkCodec() = default;
  //! Decodes one chunk from `in` into `out` (the chunk's full shape, writable, any
  //! strides). CodecError when the bytes are bad. `in` may start at out's first
  //! byte when out is C-contiguous (a shard's index decodes in place).
  virtual void decode(codec::Bytes in, const NDArray& out) const = 0;
  //! Decodes from a source; the default reads it whole and calls decode.
  virtual void decode_from(const ChunkSource& source, const NDArray& out) const;
  //! Encodes one chunk (the full chunk shape, any layout).
  virtual EncodedChunk encode(const NDArray& chunk) const = 0;
  //! True when a chunk is stored as its raw little-endian elements: the file can be mapped and used in place.
  virtual bool raw() const = 0;
  //! The byte strides of a raw chunk's elements (raw() only).
  virtual Strides raw_strides() const = 0;
  //! The most bytes an encoded chunk can hold: every codec's documented worst
  //! case applied in turn. A stored chunk bigger than this was not written by
  //! any codec of the chain, and is refused before it is read.
  virtual size_t max_encoded_size() const = 0;
  //! One line per codec for `tessera info`.
  virtual std::vector<std::string> describe() const = 0;
};

using ChunkCodecPtr = std::shared_ptr<const ChunkCodec>;

//! What a thread's scratch memory holds while one chunk is read (`index`: a
//! shard's decoded index).
enum class Scratch { encoded, layout, chunk, index };
//! At least `n` bytes of the calling thread's scratch memory for `use`, kept for
//! its next chunk when at most 4 MiB (a chunk read per task would otherwise fault in
//! fresh pages each time), fresh when large. Fresh too while the kept one is
//! still held (a shard nested in an inner chunk asks for the same use as the
//! shard around it): a returned buffer is never handed out twice at once.
Buffer thread_scratch(Scratch use, size_t n);
//! out.assign(scratch) for a source in scratch memory (never a mapped file, so
//! no SIGBUS guard, whose signal-mask system call per chunk costs more than
//! copying a small chunk): rows of memcpy. Same shape and dtype.
void copy_from_scratch(const NDArray& scratch, const NDArray& out);

//! c.encode_bound(n); SIZE_MAX (no bound) for n of 2^60 bytes or more.
size_t worst_case(const codec::Codec& c, size_t n);

//! Layout, byte order, then bytes-to-bytes codecs.
struct PipelineSpec {
  DType dtype;
  Shape chunk_shape;
  //! Stored axis i is the chunk's axis perm[i] (identity: C order; reversed: Fortran).
  std::vector<int64_t> perm;
  bool big_endian = false;
  //! In encoding order (filters first, the compressor last).
  std::vector<codec::CodecPtr> codecs;
  //! How the layout and byte order are described (v2: "order=C", v3: "bytes(endian=little)").
  std::vector<std::string> layout_description;
};
ChunkCodecPtr make_pipeline(PipelineSpec spec);

//! v3's sharding_indexed.
struct ShardingSpec {
  DType dtype;
  Shape shard_shape;
  Shape inner_shape;
  ChunkCodecPtr inner;
  //! The index's pipeline: uint64 elements of shape (chunks per shard..., 2); fixed-size codecs only.
  ChunkCodecPtr index;
  size_t index_nbytes = 0;  //!< the encoded index's size
  bool index_at_end = true;
  std::optional<Scalar> fill_value;
  std::vector<std::string> index_description;
};
ChunkCodecPtr make_sharding(ShardingSpec spec);

}  // namespace tessera::array::zarr::detail
