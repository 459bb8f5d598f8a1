// HDF5's filters, decoded and encoded by tessera (filters.hpp). The
// compressors are zarr's codecs (codecs/): HDF5's deflate is a zlib stream,
// its blosc and zstd filters store one blosc or zstd frame per chunk.
#include "array/io/hdf5/filters.hpp"

#include <cstring>
#include <limits>
#include <memory>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::hdf5::detail {
namespace {

using codec::CodecError;

enum : int { kDeflate = 1, kShuffle = 2, kFletcher32 = 3, kLzf = 32000, kBlosc = 32001, kZstd = 32015 };

constexpr size_t kUnbounded = std::numeric_limits<size_t>::max();

// The codec that decodes (and encodes, for deflate and zstd) a compressor step.
codec::CodecPtr compressor(const FilterStep& s) {
  const unsigned level = s.values.empty() ? 4 : s.values[0];
  switch (s.id) {
    case kDeflate: return codec::from_spec(absl::StrCat("zlib:", level > 9 ? 9 : level), DType::uint8());
    case kZstd: return codec::from_spec(absl::StrCat("zstd:", level > 22 ? 22 : level), DType::uint8());
    case kBlosc: return codec::from_spec("blosc", DType::uint8());
    default: return nullptr;
  }
}

// The most bytes step `s` makes of `n` (kUnbounded for a filter tessera does not know).
size_t stage_bound(const FilterStep& s, const codec::CodecPtr& c, size_t n) {
  if (n == kUnbounded) return kUnbounded;
  switch (s.id) {
    case kShuffle: return n;
    case kFletcher32: return n + 4;
    case kLzf: return n + n / 16 + 64;  // liblzf's worst case; h5py keeps it under n
    default: return c != nullptr ? c->encode_bound(n) : kUnbounded;
  }
}

size_t shuffle_size(const FilterStep& s, size_t itemsize) {
  return s.values.empty() || s.values[0] == 0 ? itemsize : s.values[0];
}

// Memory a stage writes into: uninitialised (it is overwritten whole), one pair
// per thread kept from chunk to chunk (see encode).
struct Scratch {
  std::unique_ptr<std::byte[]> data;
  size_t size = 0;
  std::span<std::byte> take(size_t n) {
    if (n > size) {
      data = std::make_unique_for_overwrite<std::byte[]>(n);
      size = n;
    }
    return {data.get(), n};
  }
};

}  // namespace

std::string filter_name(int id, const std::string& stored) {
  switch (id) {
    case kDeflate: return "deflate";
    case kShuffle: return "shuffle";
    case kFletcher32: return "fletcher32";
    case 4: return "szip";
    case 5: return "nbit";
    case 6: return "scaleoffset";
    case kLzf: return "lzf";
    case kBlosc: return "blosc";
    case kZstd: return "zstd";
    case 32008: return "bitshuffle";
    case 32004: return "lz4";
    case 307: return "bzip2";
    default: return stored.empty() ? absl::StrCat("filter ", id) : absl::StrCat(stored, " (filter ", id, ")");
  }
}

bool decodes(int id) {
  return id == kDeflate || id == kShuffle || id == kFletcher32 || id == kLzf || id == kBlosc || id == kZstd;
}

Pipeline::Pipeline(std::vector<FilterStep> steps, size_t chunk_nbytes, size_t itemsize)
    : steps_(std::move(steps)), itemsize_(itemsize) {
  bounds_.push_back(chunk_nbytes);
  for (const FilterStep& s : steps_) {
    decodable_ = decodable_ && decodes(s.id);
    codecs_.push_back(compressor(s));
    bounds_.push_back(stage_bound(s, codecs_.back(), bounds_.back()));
  }
}

void Pipeline::decode(std::span<const std::byte> in, unsigned filter_mask, std::span<std::byte> out) const {
  if (!decodable_) throw CodecError("the dataset's filters include one tessera does not decode");
  if (in.size() > max_stored_size()) {
    throw CodecError(absl::StrCat("the stored chunk holds ", in.size(), " bytes, more than the ", max_stored_size(),
                                  " its filters make of one chunk"));
  }
  // The last filter to undo writes straight into `out`; the others into scratch.
  int last = -1;
  for (int i = 0; i < static_cast<int>(steps_.size()); ++i) {
    if ((filter_mask & (1u << i)) == 0) {
      last = i;
      break;
    }
  }
  thread_local Scratch a, b;
  std::span<const std::byte> cur = in;
  for (int i = static_cast<int>(steps_.size()) - 1; i >= 0; --i) {
    if ((filter_mask & (1u << i)) != 0) continue;
    const FilterStep& s = steps_[static_cast<size_t>(i)];
    Scratch& spare = cur.data() == a.data.get() ? b : a;
    std::span<std::byte> dst = i == last ? out : spare.take(bounds_[static_cast<size_t>(i)]);
    try {
      switch (s.id) {
        case kFletcher32: {
          if (cur.size() < 4) throw CodecError(absl::StrCat("expected at least 4 bytes, found ", cur.size()));
          const auto body = cur.first(cur.size() - 4);
          uint32_t stored = 0;
          for (int k = 3; k >= 0; --k) stored = stored << 8 | std::to_integer<uint32_t>(cur[body.size() + k]);
          const uint32_t sum = fletcher32(body);
          // Files of HDF5 1.6.x and older hold the sum byte-swapped; libhdf5 accepts both.
          if (stored != sum && stored != __builtin_bswap32(sum)) {
            throw CodecError(absl::StrCat("checksum mismatch: stored ", stored, ", computed ", sum));
          }
          if (body.size() > dst.size()) throw CodecError("the chunk is larger than expected");
          std::memcpy(dst.data(), body.data(), body.size());
          dst = dst.first(body.size());
          break;
        }
        case kShuffle:
          if (cur.size() > dst.size()) throw CodecError("the chunk is larger than expected");
          dst = dst.first(cur.size());
          byte_unshuffle(cur, dst, shuffle_size(s, itemsize_));
          break;
        case kLzf: dst = dst.first(lzf_decompress(cur, dst)); break;
        default: dst = dst.first(codecs_[static_cast<size_t>(i)]->decode(cur, dst)); break;
      }
    } catch (const CodecError& e) {
      throw CodecError(absl::StrCat(filter_name(s.id), ": ", e.what()));
    }
    cur = dst;
  }
  if (cur.size() != out.size()) {
    throw CodecError(absl::StrCat("the filters decode to ", cur.size(), " bytes, expected one chunk of ", out.size()));
  }
  if (cur.data() != out.data()) std::memcpy(out.data(), cur.data(), cur.size());
}

std::span<const std::byte> Pipeline::encode(std::span<const std::byte> in) const {
  // Two buffers per thread, kept from chunk to chunk: a fresh ~1 MiB vector per
  // stage and chunk left the heap fragmented (glibc keeps what its arenas freed),
  // growing the process by about the data stored.
  thread_local std::vector<std::byte> a, b;
  std::span<const std::byte> cur = in;
  for (size_t i = 0; i < steps_.size(); ++i) {
    const FilterStep& s = steps_[i];
    std::vector<std::byte>& next = cur.data() == a.data() ? b : a;
    switch (s.id) {
      case kShuffle:
        next.resize(cur.size());
        byte_shuffle(cur, next, shuffle_size(s, itemsize_));
        break;
      case kFletcher32: {
        const uint32_t sum = fletcher32(cur);
        next.assign(cur.begin(), cur.end());
        for (int k = 0; k < 4; ++k) next.push_back(static_cast<std::byte>(sum >> (8 * k)));
        break;
      }
      case kDeflate:
      case kZstd:
        next.resize(codecs_[i]->encode_bound(cur.size()));
        next.resize(codecs_[i]->encode(cur, next));
        break;
      default: throw CodecError(absl::StrCat("tessera does not write HDF5's ", filter_name(s.id), " filter"));
    }
    cur = next;
  }
  return cur;
}

uint32_t fletcher32(std::span<const std::byte> data) {
  const auto* p = reinterpret_cast<const uint8_t*>(data.data());
  size_t len = data.size() / 2;
  uint32_t sum1 = 0, sum2 = 0;
  // 360 16-bit words at most between reductions, as HDF5's, so neither sum overflows.
  while (len > 0) {
    size_t run = len > 360 ? 360 : len;
    len -= run;
    do {
      sum1 += static_cast<uint32_t>(p[0]) << 8 | p[1];
      p += 2;
      sum2 += sum1;
    } while (--run > 0);
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  if (data.size() % 2 != 0) {
    sum1 += static_cast<uint32_t>(*p) << 8;
    sum2 += sum1;
    sum1 = (sum1 & 0xffff) + (sum1 >> 16);
    sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  }
  sum1 = (sum1 & 0xffff) + (sum1 >> 16);
  sum2 = (sum2 & 0xffff) + (sum2 >> 16);
  return sum2 << 16 | sum1;
}

// HDF5's shuffle: byte j of every element together, j = 0..size-1; the bytes
// after the last whole element stay where they are.
void byte_shuffle(std::span<const std::byte> in, std::span<std::byte> out, size_t size) {
  const size_t n = size == 0 ? 0 : in.size() / size;
  if (size <= 1 || n <= 1) {
    std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  for (size_t j = 0; j < size; ++j) {
    for (size_t e = 0; e < n; ++e) out[j * n + e] = in[e * size + j];
  }
  std::memcpy(out.data() + n * size, in.data() + n * size, in.size() - n * size);
}

void byte_unshuffle(std::span<const std::byte> in, std::span<std::byte> out, size_t size) {
  const size_t n = size == 0 ? 0 : in.size() / size;
  if (size <= 1 || n <= 1) {
    std::memcpy(out.data(), in.data(), in.size());
    return;
  }
  for (size_t j = 0; j < size; ++j) {
    for (size_t e = 0; e < n; ++e) out[e * size + j] = in[j * n + e];
  }
  std::memcpy(out.data() + n * size, in.data() + n * size, in.size() - n * size);
}

// liblzf's lzf_decompress: a control byte below 32 starts a run of ctrl + 1
// literals; above, a back reference of length (ctrl >> 5) + 2 (+ the next
// byte when that is 7) at distance ((ctrl & 31) << 8 | next) + 1.
size_t lzf_decompress(std::span<const std::byte> in, std::span<std::byte> out) {
  const auto* ip = reinterpret_cast<const uint8_t*>(in.data());
  const uint8_t* const in_end = ip + in.size();
  auto* const op0 = reinterpret_cast<uint8_t*>(out.data());
  uint8_t* op = op0;
  uint8_t* const out_end = op0 + out.size();
  while (ip < in_end) {
    unsigned ctrl = *ip++;
    if (ctrl < 32) {
      ++ctrl;
      if (static_cast<size_t>(out_end - op) < ctrl) throw CodecError("the stream holds more than the expected bytes");
      if (static_cast<size_t>(in_end - ip) < ctrl) throw CodecError("corrupt stream (a literal run past its end)");
      std::memcpy(op, ip, ctrl);
      op += ctrl;
      ip += ctrl;
      continue;
    }
    size_t len = ctrl >> 5;
    size_t back = static_cast<size_t>(ctrl & 31) << 8;
    if (ip >= in_end) throw CodecError("corrupt stream (a reference past its end)");
    if (len == 7) {
      len += *ip++;
      if (ip >= in_end) throw CodecError("corrupt stream (a reference past its end)");
    }
    back += *ip++ + 1;
    len += 2;
    if (back > static_cast<size_t>(op - op0)) throw CodecError("corrupt stream (a reference before the start)");
    if (static_cast<size_t>(out_end - op) < len) throw CodecError("the stream holds more than the expected bytes");
    const uint8_t* ref = op - back;
    for (size_t k = 0; k < len; ++k) *op++ = *ref++;  // may overlap: byte by byte
  }
  return static_cast<size_t>(op - op0);
}

}  // namespace tessera::array::hdf5::detail
