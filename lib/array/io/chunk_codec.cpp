// The pipeline of one chunk: layout and byte order, then bytes-to-bytes codecs.
//
// Decoding writes the last step straight into the caller's array when its
// strides are the stored layout's and no byte swap follows (the common case:
// a compressed little-endian chunk decodes into the block's own memory, with
// no copy after the decompressor); otherwise into a scratch buffer that is
// swapped and copied into place.
#include "array/io/chunk_codec.hpp"

#include <algorithm>
#include <cstring>
#include <limits>

#include <absl/strings/str_cat.h>

#include "array/core/strided.hpp"
#include "array/io/bus_guard.hpp"

namespace tessera::array::zarr::detail {
namespace {

using codec::Bytes;
using codec::CodecError;
using codec::MutableBytes;

Buffer fresh(size_t n) { return Buffer::allocate(std::max<size_t>(n, 1)); }

class Pipeline final : public ChunkCodec {
 public:
  explicit Pipeline(PipelineSpec spec) : s_(std::move(spec)) {
    const size_t item = s_.dtype.itemsize();
    nbytes_ = item;
    for (int64_t c : s_.chunk_shape) nbytes_ *= static_cast<size_t>(c);
    // Stored axis i has C-order strides over the permuted shape; the chunk's axis perm[i] takes that stride.
    Shape stored;
    for (int64_t a : s_.perm) stored.push_back(s_.chunk_shape[static_cast<size_t>(a)]);
    const Strides c = NDArray::c_strides(stored, item);
    strides_.assign(s_.chunk_shape.size(), 0);
    for (size_t i = 0; i < s_.perm.size(); ++i) strides_[static_cast<size_t>(s_.perm[i])] = c[i];
    // The size each codec decodes to, when every codec before it has a fixed
    // size, and the most it can decode to (the worst case of the codecs before it).
    sizes_.assign(s_.codecs.size(), 0);
    bounds_.assign(s_.codecs.size() + 1, nbytes_);
    size_t size = nbytes_;
    for (size_t k = 0; k < s_.codecs.size(); ++k) {
      sizes_[k] = size;
      size = size == 0 ? 0 : s_.codecs[k]->encoded_size(size);
      bounds_[k + 1] = worst_case(*s_.codecs[k], bounds_[k]);
    }
  }

  size_t max_encoded_size() const override { return bounds_.back(); }

  void decode(Bytes in, const NDArray& out) const override {
    const bool direct = !s_.big_endian && out.strides() == strides_ && out.writable();
    Buffer scratch;
    auto target = [&](size_t n) -> MutableBytes {
      if (direct) return {out.data(), n};
      if (scratch.size() < n) scratch = thread_scratch(Scratch::layout, n);
      return {scratch.data(), n};
    };
    Bytes cur = in;
    Buffer hold[2];
    if (!s_.codecs.empty() && in.size() > bounds_.back()) throw too_big(in.size(), bounds_.back());
    for (size_t k = s_.codecs.size(); k-- > 0;) {
      // A codec decodes to at most what the codecs before it can make; one
      // of fixed size to exactly that.
      const size_t fixed = sizes_[k] != 0 ? sizes_[k] : s_.codecs[k]->decoded_size(cur.size());
      const size_t cap = fixed != 0 ? std::min(fixed, bounds_[k]) : bounds_[k];
      MutableBytes dst;
      if (k == 0) {
        dst = target(nbytes_);
      } else {
        hold[k % 2] = fresh(cap);
        dst = {hold[k % 2].data(), cap};
      }
      const size_t n = s_.codecs[k]->decode(cur, dst);
      if (sizes_[k] != 0 && n != sizes_[k]) {
        throw CodecError(
            absl::StrCat(s_.codecs[k]->name(), " decoded to ", n, " bytes, expected ", sizes_[k],
                         k == 0 ? absl::StrCat(" (", s_.dtype.name(), " ", shape_str(s_.chunk_shape), ")") : ""));
      }
      cur = Bytes(dst.data(), n);
    }
    if (s_.codecs.empty()) {
      if (in.size() != nbytes_) {
        throw CodecError(absl::StrCat("expected an uncompressed chunk of ", nbytes_, " bytes (", s_.dtype.name(), " ",
                                      shape_str(s_.chunk_shape), "), found ", in.size(), " bytes"));
      }
      MutableBytes dst = target(nbytes_);
      if (dst.data() != in.data()) std::memcpy(dst.data(), in.data(), nbytes_);
    }
    if (direct) return;
    if (s_.big_endian) byteswap(scratch.data(), nbytes_ / s_.dtype.itemsize(), s_.dtype);
    copy_from_scratch(NDArray(scratch, s_.dtype, s_.chunk_shape, strides_, 0), out);
  }

  EncodedChunk encode(const NDArray& chunk) const override {
    // A chunk already in the stored layout (a rechunked slice, a block read
    // whole) goes to the first codec as it is: copying it first would cost a
    // pass over every byte written. Not a mapped file's bytes, though: a codec
    // reading them would meet a SIGBUS unguarded if the file shrank; the copy
    // (assign) guards its reads.
    const bool in_place = !s_.codecs.empty() && !s_.big_endian && chunk.strides() == strides_ &&
                          chunk.shape() == s_.chunk_shape && chunk.dtype() == s_.dtype &&
                          array::detail::mapped_path_of(chunk.data()).empty();
    EncodedChunk cur;
    Bytes in;
    if (in_place) {
      in = Bytes(chunk.data(), nbytes_);
    } else {
      Buffer raw = fresh(nbytes_);
      NDArray(raw, s_.dtype, s_.chunk_shape, strides_, 0).assign(chunk);
      if (s_.big_endian) byteswap(raw.data(), nbytes_ / s_.dtype.itemsize(), s_.dtype);
      cur = {raw, nbytes_};
      in = cur.bytes();
    }
    for (const codec::CodecPtr& c : s_.codecs) {
      const size_t bound = c->encode_bound(in.size());
      Buffer next = fresh(bound);
      const size_t n = c->encode(in, MutableBytes(next.data(), bound));
      cur = {next, n};
      in = cur.bytes();
    }
    return cur;
  }

  bool raw() const override { return s_.codecs.empty() && !s_.big_endian; }
  Strides raw_strides() const override { return strides_; }

  std::vector<std::string> describe() const override {
    std::vector<std::string> out = s_.layout_description;
    for (const codec::CodecPtr& c : s_.codecs) out.push_back(c->describe());
    return out;
  }

 private:
  CodecError too_big(size_t found, size_t bound) const {
    return CodecError(absl::StrCat("expected an encoded chunk of at most ", bound, " bytes (the worst case of ",
                                   describe().back(), " for ", s_.dtype.name(), " ", shape_str(s_.chunk_shape),
                                   "), found ", found, " bytes"));
  }

  PipelineSpec s_;
  size_t nbytes_ = 0;
  Strides strides_;
  std::vector<size_t> sizes_;
  std::vector<size_t> bounds_;  // bounds_[k]: the most bytes codec k decodes to; back(): the encoded chunk's
};

}  // namespace

size_t worst_case(const codec::Codec& c, size_t n) {
  // Every codec's bound is under 8n + 64 KiB (a filter widening int8 to int64): below 2^60 nothing wraps.
  constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();
  return n >= (size_t{1} << 60) ? kUnbounded : c.encode_bound(n);
}

void copy_from_scratch(const NDArray& scratch, const NDArray& out) {
  const size_t item = scratch.dtype().itemsize();
  const auto width = static_cast<int64_t>(item);
  array::detail::for_each_row<2>(out.shape(), {out.data(), const_cast<std::byte*>(scratch.data())},
                          {&out.strides(), &scratch.strides()}, [item, width](auto p, int64_t count, auto inner) {
                            if (inner[0] == width && inner[1] == width) {
                              std::memcpy(p[0], p[1], static_cast<size_t>(count) * item);
                              return;
                            }
                            for (int64_t j = 0; j < count; ++j)
                              std::memcpy(p[0] + j * inner[0], p[1] + j * inner[1], item);
                          });
}

Buffer thread_scratch(Scratch use, size_t n) {
  constexpr size_t kKept = size_t{4} << 20;  // at most 16 MiB kept per thread
  if (n > kKept) return fresh(n);
  thread_local Buffer kept[4];
  Buffer& b = kept[static_cast<size_t>(use)];
  if (b.use_count() > 1) return fresh(n);  // still in use: the caller's is its own
  if (b.size() < n) b = fresh(n);
  return b;
}

EncodedChunk ChunkSource::read_all() const {
  const size_t n = size();
  EncodedChunk all{thread_scratch(Scratch::encoded, n), n};
  read(0, MutableBytes(all.buffer.data(), n));
  return all;
}

void ChunkCodec::decode_from(const ChunkSource& source, const NDArray& out) const {
  const EncodedChunk all = source.read_all();  // held while decode reads it
  decode(all.bytes(), out);
}

ChunkCodecPtr make_pipeline(PipelineSpec spec) { return std::make_shared<Pipeline>(std::move(spec)); }

}  // namespace tessera::array::zarr::detail
