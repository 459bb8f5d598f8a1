// zarr v3's sharding_indexed: a chunk (a shard) stored as inner chunks, each
// encoded by the inner codecs, with an index of (offset, nbytes) pairs, one per
// inner chunk in C order, at the end or the start of the shard; both fields all
// ones mark an inner chunk that was never written (it reads as the fill value).
//
// Reading from a file takes the index first, then the inner chunks in runs: the
// present ones sorted by offset, neighbours that touch joined, one pread per
// run. A shard written in order is one run.
#include <algorithm>
#include <array>
#include <cstring>
#include <limits>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/core/strided.hpp"
#include "array/io/chunk_codec.hpp"

namespace tessera::array::zarr::detail {
namespace {

using codec::Bytes;
using codec::CodecError;
using codec::MutableBytes;

constexpr uint64_t kMissing = std::numeric_limits<uint64_t>::max();

// An inner chunk that was never written: both fields all ones.
bool missing(const uint64_t* fields, size_t i) { return fields[2 * i] == kMissing && fields[2 * i + 1] == kMissing; }

// Bytes appended to one buffer that doubles when full: the encoded shard,
// built without a buffer per inner chunk.
class Appender {
 public:
  explicit Appender(size_t capacity) : buffer_(Buffer::allocate(std::max<size_t>(capacity, 1))) {}
  void append(Bytes bytes) {
    reserve(size_ + bytes.size());
    std::copy_n(bytes.data(), bytes.size(), buffer_.data() + size_);
    size_ += bytes.size();
  }
  //! The `n` bytes at `offset` (below size()), to fill in place.
  std::byte* at(size_t offset) { return buffer_.data() + offset; }
  void resize(size_t n) {
    reserve(n);
    size_ = n;
  }
  size_t size() const { return size_; }
  EncodedChunk done() { return {buffer_, size_}; }

 private:
  void reserve(size_t n) {
    if (n <= buffer_.size()) return;
    Buffer bigger = Buffer::allocate(std::max(n, 2 * buffer_.size()));
    std::copy_n(buffer_.data(), size_, bigger.data());
    buffer_ = std::move(bigger);
  }
  Buffer buffer_;
  size_t size_ = 0;
};

// Every inner chunk costs its 16 bytes of index and nothing more while a shard
// is read or written: the index array itself is the bookkeeping (an inner
// chunk's position is its C-order number, unravelled when needed), inner
// chunks are encoded one at a time into one growing buffer, and they are read
// in index order unless the shard stores them out of order, when one number
// per present inner chunk orders them. A shard of 2^22 one-byte inner chunks
// thus costs its 64 MiB index, not gigabytes of per-chunk records.
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
    max_bytes_ =
        most > std::numeric_limits<size_t>::max() ? std::numeric_limits<size_t>::max() : static_cast<size_t>(most);
    raw_inner_ = s_.inner->raw() && !grid_.empty();
    if (raw_inner_) raw_strides_ = s_.inner->raw_strides();
    inner_nbytes_ = s_.dtype.itemsize();
    for (int64_t e : s_.inner_shape) inner_nbytes_ *= static_cast<size_t>(e);
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
    bool is_dense = false;
    const NDArray index = read_index(source, is_dense);
    const uint64_t* f = index.data<uint64_t>();
    if (is_dense) {
      read_dense(source, f[0], out);
      return;
    }
    bool in_order = true;
    uint64_t last = 0;
    for (size_t i = 0; i < count_; ++i) {
      if (missing(f, i)) {
        region(out, inner_index(i)).fill(s_.fill_value.value_or(Scalar(0)));
      } else {
        in_order = in_order && f[2 * i] >= last;
        last = f[2 * i];
      }
    }
    // The present inner chunks by offset: their C order when the shard stores them so.
    std::vector<size_t> order;
    if (!in_order) {
      for (size_t i = 0; i < count_; ++i) {
        if (!missing(f, i)) order.push_back(i);
      }
      std::sort(order.begin(), order.end(), [f](size_t a, size_t b) { return f[2 * a] < f[2 * b]; });
    }
    const size_t n = in_order ? count_ : order.size();
    std::vector<int64_t> counter(grid_.size());  // copy_raw_inner's, allocated once per shard
    const auto id = [&](size_t k) { return in_order ? k : order[k]; };
    for (size_t k = 0; k < n;) {
      if (missing(f, id(k))) {
        ++k;
        continue;
      }
      // A run: the inner chunks that follow each other in the file, read with one call.
      const uint64_t start = f[2 * id(k)];
      uint64_t end = start + f[2 * id(k) + 1];
      size_t j = k + 1;
      for (; j < n; ++j) {
        if (missing(f, id(j))) continue;
        if (f[2 * id(j)] != end) break;
        end += f[2 * id(j) + 1];
      }
      const Buffer run = thread_scratch(Scratch::encoded, end - start);
      source.read(start, MutableBytes(run.data(), end - start));
      for (; k < j; ++k) {
        const size_t i = id(k);
        if (missing(f, i)) continue;
        const std::byte* bytes = run.data() + (f[2 * i] - start);
        if (raw_inner_ && f[2 * i + 1] == inner_nbytes_) {
          copy_raw_inner(bytes, out, i, counter);
          continue;
        }
        const std::vector<int64_t> idx = inner_index(i);
        try {
          s_.inner->decode(Bytes(bytes, f[2 * i + 1]), region(out, idx));
        } catch (const CodecError& err) {
          throw CodecError(absl::StrCat("inner chunk (", absl::StrJoin(idx, ", "), "): ", err.what()));
        }
      }
    }
  }

  EncodedChunk encode(const NDArray& chunk) const override {
    NDArray index = NDArray::empty(DType::uint64(), index_shape_);
    auto* fields = index.data<uint64_t>();
    const size_t first = s_.index_at_end ? 0 : s_.index_nbytes;
    Appender out(first + chunk.nbytes() + s_.index_nbytes);  // exact for raw inner chunks
    out.resize(first);  // the index's place at the start, filled in last
    size_t i = 0;
    for_each_inner([&](const std::vector<int64_t>& idx) {
      const EncodedChunk part = s_.inner->encode(region(chunk, idx));
      fields[2 * i] = out.size();
      fields[2 * i + 1] = part.size;
      out.append(part.bytes());
      ++i;
    });
    const EncodedChunk encoded_index = s_.index->encode(index);
    if (s_.index_at_end) {
      out.append(encoded_index.bytes());
    } else {
      std::copy_n(encoded_index.buffer.data(), encoded_index.size, out.at(0));
    }
    return out.done();
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
  // The shard's index, decoded and checked: every present inner chunk lies in
  // the bytes outside the index. `is_dense` tells whether the shard is dense
  // (see dense()): its inner chunks are then checked as the one run they make.
  NDArray read_index(const ChunkSource& source, bool& is_dense) const {
    const size_t size = source.size();
    if (size < s_.index_nbytes) {
      throw CodecError(absl::StrCat("truncated shard: ", size, " bytes, shorter than its index of ", s_.index_nbytes,
                                    " bytes"));
    }
    // Read into memory the thread keeps (a fresh megabyte of index per shard
    // costs more in page faults than reading and checking it) and decoded
    // there, in place: the index codecs keep the fields where they are.
    const Buffer memory = thread_scratch(Scratch::index, std::max(count_ * 16, s_.index_nbytes));
    NDArray index(memory, DType::uint64(), index_shape_, NDArray::c_strides(index_shape_, sizeof(uint64_t)), 0);
    source.read(s_.index_at_end ? size - s_.index_nbytes : 0, MutableBytes(memory.data(), s_.index_nbytes));
    try {
      s_.index->decode(Bytes(memory.data(), s_.index_nbytes), index);
    } catch (const CodecError& e) {
      throw CodecError(absl::StrCat("shard index: ", e.what()));
    }
    const auto* f = index.data<uint64_t>();
    const uint64_t lo = s_.index_at_end ? 0 : s_.index_nbytes;
    const uint64_t hi = s_.index_at_end ? size - s_.index_nbytes : size;
    const uint64_t total = count_ * inner_nbytes_;
    is_dense = raw_inner_ && count_ > 0 && dense(f) && f[0] >= lo && total <= hi && f[0] <= hi - total;
    if (is_dense) return index;
    for (size_t i = 0; i < count_; ++i) {
      const uint64_t offset = f[2 * i], nbytes = f[2 * i + 1];
      if (!missing(f, i) && (offset < lo || nbytes > hi || offset > hi - nbytes)) {
        throw CodecError(absl::StrCat("shard index: inner chunk (", absl::StrJoin(inner_index(i), ", "),
                                      ") at offset ", offset, " with ", nbytes,
                                      " bytes lies outside the shard's data (bytes ", lo, " to ", hi, ")"));
      }
    }
    return index;
  }

  // Whether every inner chunk is present, raw and full size, stored in C
  // order one after the other: the shard's data is then the inner chunks'
  // elements as one array of the grid's axes, then the inner chunk's.
  bool dense(const uint64_t* f) const {
    uint64_t next = f[0];
    for (size_t i = 0; i < count_; ++i, next += inner_nbytes_) {
      if (f[2 * i] != next || f[2 * i + 1] != inner_nbytes_) return false;
    }
    return true;
  }

  // Reads a dense shard whose data starts at `start`: one read, and no work
  // per inner chunk. The copy into `out` walks the grid's and the inner
  // chunk's axes together, joined where both sides are contiguous (1 x 1
  // inner chunks of a C-order shard are one run); a shard whose data lies in
  // `out`'s layout is read straight into it.
  void read_dense(const ChunkSource& source, uint64_t start, const NDArray& out) const {
    const size_t nd = grid_.size();
    const size_t total = count_ * inner_nbytes_;
    std::vector<int64_t> shape(2 * nd);
    std::array<std::vector<int64_t>, 2> strides{std::vector<int64_t>(2 * nd), std::vector<int64_t>(2 * nd)};
    auto step = static_cast<int64_t>(inner_nbytes_);  // between neighbours along grid axis a
    for (size_t a = nd; a-- > 0;) {
      shape[a] = grid_[a];
      shape[nd + a] = s_.inner_shape[a];
      strides[0][a] = s_.inner_shape[a] * out.strides()[a];
      strides[0][nd + a] = out.strides()[a];
      strides[1][a] = step;
      strides[1][nd + a] = raw_strides_[a];
      step *= grid_[a];
    }
    array::detail::merge_axes(shape, strides);
    const auto item = static_cast<int64_t>(s_.dtype.itemsize());
    if (shape.empty() || (shape.size() == 1 && strides[0][0] == item && strides[1][0] == item)) {
      source.read(start, MutableBytes(out.data(), total));
      return;
    }
    const Buffer data = thread_scratch(Scratch::encoded, total);
    source.read(start, MutableBytes(data.data(), total));
    copy_from_scratch(NDArray(data, s_.dtype, shape, strides[1], 0),
                      NDArray(out.buffer(), s_.dtype, shape, strides[0], out.offset()));
  }

  // Inner chunk number `i` (C order) as its position in the shard's grid.
  std::vector<int64_t> inner_index(size_t i) const {
    std::vector<int64_t> idx(grid_.size());
    for (size_t a = grid_.size(); a-- > 0;) {
      idx[a] = static_cast<int64_t>(i % static_cast<size_t>(grid_[a]));
      i /= static_cast<size_t>(grid_[a]);
    }
    return idx;
  }

  // Copies raw inner chunk `i` (its elements at raw_strides_, little-endian) into
  // its region of `out` with no view, index vector or buffer of its own: in a
  // store of tiny chunks that per-chunk bookkeeping, not the bytes, is the cost.
  // `counter` is scratch of ndim entries.
  void copy_raw_inner(const std::byte* src, const NDArray& out, size_t i, std::vector<int64_t>& counter) const {
    const size_t nd = grid_.size();
    const Strides& dst_strides = out.strides();
    std::byte* dst = out.data();
    for (size_t a = nd; a-- > 0;) {
      const auto g = static_cast<size_t>(grid_[a]);
      dst += static_cast<int64_t>(i % g) * s_.inner_shape[a] * dst_strides[a];
      i /= g;
    }
    const size_t item = s_.dtype.itemsize();
    const size_t last = nd - 1;
    const int64_t row = s_.inner_shape[last];
    const bool rows_contiguous = raw_strides_[last] == static_cast<int64_t>(item) &&
                                 dst_strides[last] == static_cast<int64_t>(item);
    std::fill(counter.begin(), counter.end(), 0);
    for (;;) {
      int64_t s_off = 0, d_off = 0;
      for (size_t a = 0; a < last; ++a) {
        s_off += counter[a] * raw_strides_[a];
        d_off += counter[a] * dst_strides[a];
      }
      if (rows_contiguous) {
        std::memcpy(dst + d_off, src + s_off, static_cast<size_t>(row) * item);
      } else {
        for (int64_t e = 0; e < row; ++e) {
          std::memcpy(dst + d_off + e * dst_strides[last], src + s_off + e * raw_strides_[last], item);
        }
      }
      size_t a = last;
      for (; a-- > 0;) {
        if (++counter[a] < s_.inner_shape[a]) break;
        counter[a] = 0;
      }
      if (a == static_cast<size_t>(-1)) return;
    }
  }

  NDArray region(const NDArray& shard, const std::vector<int64_t>& idx) const {
    std::vector<Slice> r;
    for (size_t a = 0; a < idx.size(); ++a)
      r.emplace_back(idx[a] * s_.inner_shape[a], (idx[a] + 1) * s_.inner_shape[a]);
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
  bool raw_inner_ = false;     // inner chunks stored as their raw little-endian elements
  Strides raw_strides_;        // their elements' byte strides (raw_inner_ only)
  size_t inner_nbytes_ = 0;    // the bytes of one raw inner chunk
};

}  // namespace

ChunkCodecPtr make_sharding(ShardingSpec spec) { return std::make_shared<Sharding>(std::move(spec)); }

}  // namespace tessera::array::zarr::detail
