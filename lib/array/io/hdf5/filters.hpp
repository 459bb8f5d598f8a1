// Private: an HDF5 dataset's filter pipeline, decoded and encoded by tessera
// itself, so that it runs in each block's task outside libhdf5's lock.
//
// HDF5 applies a dataset's filters in order when it writes a chunk (shuffle,
// then deflate, then fletcher32, say) and stores the result; a chunk's filter
// mask marks the filters that were skipped for it (an optional filter that
// made the chunk bigger). Decoding runs the filters backwards. tessera knows
// deflate (1), shuffle (2), fletcher32 (3), h5py's lzf (32000), blosc (32001)
// and zstd (32015); a pipeline with any other filter is not `decodable()`, and
// the reader falls back to H5Dread under the lock.
//
// Every size is bounded before memory is taken: a stored chunk larger than
// the most the pipeline makes of one chunk is refused, and each decoder writes
// into a buffer of the most its stage can hold (a chunk's bytes at the end).
//
// @code
//   Pipeline p({{2, {4}}, {1, {4}}}, /*chunk_nbytes=*/1 << 20, /*itemsize=*/4);   // shuffle + deflate
//   p.decode(raw, /*filter_mask=*/0, out);    // out: 1 MiB
// @endcode
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <vector>

namespace tessera::array::codec {
class Codec;
}

namespace tessera::array::hdf5::detail {

//! One entry of a dataset's filter pipeline, as H5Pget_filter2 reports it.
struct FilterStep {
  int id = 0;                    //!< H5Z filter id (1 deflate, 2 shuffle, 3 fletcher32, ...)
  std::vector<unsigned> values;  //!< its client data
  std::string name;              //!< the name stored in the file ("" when none)
};

//! The name tessera gives filter `id` ("deflate", "shuffle", ...; "filter 307" for one it does not know).
std::string filter_name(int id, const std::string& stored = "");
//! True when tessera decodes filter `id` itself.
bool decodes(int id);

class Pipeline {
 public:
  //! The dataset's filters in write order, for chunks of `chunk_nbytes` bytes of `itemsize`-byte elements.
  Pipeline(std::vector<FilterStep> steps, size_t chunk_nbytes, size_t itemsize);

  //! True when tessera decodes every filter (otherwise read through H5Dread).
  bool decodable() const { return decodable_; }
  //! The filters, in write order.
  const std::vector<FilterStep>& steps() const { return steps_; }
  //! The most bytes a stored chunk may hold: each stage's worst case in turn.
  size_t max_stored_size() const { return bounds_.back(); }
  //! Decodes the stored bytes `in` (filters whose bit is set in `filter_mask`
  //! skipped) into `out`, exactly one chunk's bytes. CodecError saying which
  //! filter failed and why when the bytes are not what the filters make.
  void decode(std::span<const std::byte> in, unsigned filter_mask, std::span<std::byte> out) const;
  //! Encodes one chunk's bytes: what H5Dwrite_chunk stores (filter mask 0); `in`
  //! itself without filters. The bytes are the calling thread's, valid until its next encode.
  std::span<const std::byte> encode(std::span<const std::byte> in) const;

 private:
  std::vector<FilterStep> steps_;
  std::vector<std::shared_ptr<const codec::Codec>> codecs_;  //!< per step: its compressor, or null
  std::vector<size_t> bounds_;  //!< bounds_[i]: the most bytes entering filter i; back(): stored
  size_t itemsize_;
  bool decodable_ = true;
};

//! HDF5's Fletcher-32 of `data` (H5_checksum_fletcher32).
uint32_t fletcher32(std::span<const std::byte> data);
//! HDF5's byte shuffle of `in` (elements of `size` bytes) into `out`, and back.
void byte_shuffle(std::span<const std::byte> in, std::span<std::byte> out, size_t size);
void byte_unshuffle(std::span<const std::byte> in, std::span<std::byte> out, size_t size);
//! liblzf's decompressor (h5py's lzf filter): the bytes written; CodecError when `in` is corrupt or overflows `out`.
size_t lzf_decompress(std::span<const std::byte> in, std::span<std::byte> out);

}  // namespace tessera::array::hdf5::detail
