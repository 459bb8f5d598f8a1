// zarr v3's sharding_indexed: a chunk (a shard) stored as inner chunks, each
// encoded by the inner codecs, with an index of (offset, nbytes) pairs, one per
// inner chunk in C order, at the end or the start of the shard; both fields all
// ones mark an inner chunk that was never written (it reads as the fill value).
//
// Reading from a file takes the index first, then the inner chunks in runs: the
// present ones sorted by offset, neighbours that touch joined, one pread per
// run. A shard written in order is one run.
#include <algorithm>
#include <cstring>
#include <limits>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/io/chunk_codec.hpp"

namespace tessera::array::zarr::detail {
namespace {

using codec::Bytes;
using codec::CodecError;
using codec::MutableBytes;

constexpr uint64_t kMissing = std::numeric_limits<uint64_t>::max();

struct Entry {
  std::vector<int64_t> index;  // the inner chunk's position in the shard's grid
  uint64_t offset = kMissing;
  uint64_t nbytes = kMissing;
};

class Sharding final : public ChunkCodec {
 public:
  explicit Sharding(ShardingSpec spec) : s_(std::move(spec)) {
    for (size_t a = 0; a < s_.shard_shape.size(); ++a) grid_.push_back(s_.shard_shape[a] / s_.inner_shape[a]);
    count_ = 1;
    for (int64_t g : grid_) count_ *= static_cast<size_t>(g);
    index_shape_ = grid_;
    index_shape_.push_back(2);
    // Every inner chunk at its worst, and the index.
    const unsigned __int128 most =
        static_cast<unsigned __int128>(count_) * s_.inner->max_encoded_size() + s_.index_nbytes;
    max_bytes_ = most > std::numeric_limits<size_t>::max() ? std::numeric_limits<size_t>::max() : static_cast<size_t>(most);
  }

  void decode(Bytes in, const NDArray& out) const override {
    struct Memory final : ChunkSource {
      Bytes bytes;
      size_t size() const override { return bytes.size(); }
      void read(size_t offset, MutableBytes dst) const override {
        std::memcpy(dst.data(), bytes.data() + offset, dst.size());
      }
    } memory;
    memory.bytes = in;
    decode_from(memory, out);
  }

  void decode_from(const ChunkSource& source, const NDArray& out) const override {
    std::vector<Entry> entries = read_index(source);
    std::vector<const Entry*> present;
    for (const Entry& e : entries) {
      if (e.offset == kMissing && e.nbytes == kMissing) {
        region(out, e.index).fill(s_.fill_value.value_or(Scalar(0)));
      } else {
        present.push_back(&e);
      }
    }
    std::sort(present.begin(), present.end(), [](const Entry* a, const Entry* b) { return a->offset < b->offset; });
    for (size_t i = 0; i < present.size();) {
      size_t j = i + 1;
      uint64_t end = present[i]->offset + present[i]->nbytes;
      while (j < present.size() && present[j]->offset == end) end += present[j++]->nbytes;
      const uint64_t start = present[i]->offset;
      Buffer run = Buffer::allocate(std::max<size_t>(end - start, 1));
      source.read(start, MutableBytes(run.data(), end - start));
      for (; i < j; ++i) {
        const Entry& e = *present[i];
        try {
          s_.inner->decode(Bytes(run.data() + (e.offset - start), e.nbytes), region(out, e.index));
        } catch (const CodecError& err) {
          throw CodecError(absl::StrCat("inner chunk (", absl::StrJoin(e.index, ", "), "): ", err.what()));
        }
      }
    }
  }

  EncodedChunk encode(const NDArray& chunk) const override {
    std::vector<EncodedChunk> parts;
    parts.reserve(count_);
    for_each_inner([&](const std::vector<int64_t>& idx) { parts.push_back(s_.inner->encode(region(chunk, idx))); });
    NDArray index = NDArray::empty(DType::uint64(), index_shape_);
    auto* fields = index.data<uint64_t>();
    uint64_t offset = s_.index_at_end ? 0 : s_.index_nbytes;
    for (size_t i = 0; i < parts.size(); ++i) {
      fields[2 * i] = offset;
      fields[2 * i + 1] = parts[i].size;
      offset += parts[i].size;
    }
    const EncodedChunk encoded_index = s_.index->encode(index);
    const size_t total = offset + (s_.index_at_end ? s_.index_nbytes : 0);
    Buffer out = Buffer::allocate(std::max<size_t>(total, 1));
    std::byte* p = out.data();
    if (!s_.index_at_end) p = std::copy_n(encoded_index.buffer.data(), encoded_index.size, p);
    for (const EncodedChunk& part : parts) p = std::copy_n(part.buffer.data(), part.size, p);
    if (s_.index_at_end) std::copy_n(encoded_index.buffer.data(), encoded_index.size, p);
    return {out, total};
  }

  bool raw() const override { return false; }
  Strides raw_strides() const override { return {}; }
  size_t max_encoded_size() const override { return max_bytes_; }

  std::vector<std::string> describe() const override {
    std::vector<std::string> out = {absl::StrCat("sharding_indexed(chunk_shape=", shape_str(s_.inner_shape),
                                                 ", index_location=", s_.index_at_end ? "end" : "start", ")")};
    for (const std::string& d : s_.inner->describe()) out.push_back("  " + d);
    for (const std::string& d : s_.index_description) out.push_back("  index: " + d);
    return out;
  }

 private:
  std::vector<Entry> read_index(const ChunkSource& source) const {
    const size_t size = source.size();
    if (size < s_.index_nbytes) {
      throw CodecError(absl::StrCat("truncated shard: ", size, " bytes, shorter than its index of ", s_.index_nbytes,
                                    " bytes"));
    }
    Buffer raw = Buffer::allocate(std::max<size_t>(s_.index_nbytes, 1));
    source.read(s_.index_at_end ? size - s_.index_nbytes : 0, MutableBytes(raw.data(), s_.index_nbytes));
    NDArray index = NDArray::empty(DType::uint64(), index_shape_);
    try {
      s_.index->decode(Bytes(raw.data(), s_.index_nbytes), index);
    } catch (const CodecError& e) {
      throw CodecError(absl::StrCat("shard index: ", e.what()));
    }
    const auto* fields = index.data<uint64_t>();
    // Inner chunks live in the bytes outside the index.
    const uint64_t lo = s_.index_at_end ? 0 : s_.index_nbytes;
    const uint64_t hi = s_.index_at_end ? size - s_.index_nbytes : size;
    std::vector<Entry> entries;
    entries.reserve(count_);
    size_t i = 0;
    for_each_inner([&](const std::vector<int64_t>& idx) {
      Entry e{idx, fields[2 * i], fields[2 * i + 1]};
      ++i;
      const bool missing = e.offset == kMissing && e.nbytes == kMissing;
      if (!missing && (e.offset < lo || e.nbytes > hi || e.offset > hi - e.nbytes)) {
        throw CodecError(absl::StrCat("shard index: inner chunk (", absl::StrJoin(idx, ", "), ") at offset ", e.offset,
                                      " with ", e.nbytes, " bytes lies outside the shard's data (bytes ", lo, " to ",
                                      hi, ")"));
      }
      entries.push_back(std::move(e));
    });
    return entries;
  }

  NDArray region(const NDArray& shard, const std::vector<int64_t>& idx) const {
    std::vector<Slice> r;
    for (size_t a = 0; a < idx.size(); ++a) r.emplace_back(idx[a] * s_.inner_shape[a], (idx[a] + 1) * s_.inner_shape[a]);
    return shard.slice(r);
  }

  template <class F>
  void for_each_inner(F&& f) const {
    std::vector<int64_t> idx(grid_.size(), 0);
    for (size_t n = 0; n < count_; ++n) {
      f(idx);
      for (size_t a = grid_.size(); a-- > 0;) {
        if (++idx[a] < grid_[a]) break;
        idx[a] = 0;
      }
    }
  }

  ShardingSpec s_;
  Shape grid_;
  Shape index_shape_;
  size_t count_ = 0;
  size_t max_bytes_ = 0;
};

}  // namespace

ChunkCodecPtr make_sharding(ShardingSpec spec) { return std::make_shared<Sharding>(std::move(spec)); }

}  // namespace tessera::array::zarr::detail
