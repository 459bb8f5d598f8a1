// crc32c (zarr v3): a 4-byte little-endian CRC-32C (Castagnoli) after the bytes.
// The checksum is Intel ISA-L's (Debian's libisal-dev; CRC-32C is iSCSI's CRC),
// which picks the processor's crc32 instruction where it has one: a shard's index
// is megabytes, checked on every read, and a table-driven CRC took a quarter of
// reading a shard of one-byte inner chunks.
#include <isa-l/crc.h>

#include <algorithm>
#include <climits>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

}  // namespace

uint32_t crc32c_checksum(Bytes in) {
  // ISA-L takes the register (no inversion before or after) and an int length.
  auto* p = reinterpret_cast<unsigned char*>(const_cast<std::byte*>(in.data()));
  uint32_t c = 0xFFFFFFFFu;
  for (size_t left = in.size(); left > 0;) {
    const size_t n = std::min<size_t>(left, INT_MAX);
    c = crc32_iscsi(p, static_cast<int>(n), c);
    p += n;
    left -= n;
  }
  return c ^ 0xFFFFFFFFu;
}

namespace {

class Crc32c final : public Codec {
 public:
  std::string name() const override { return "crc32c"; }
  std::string describe() const override { return "crc32c"; }

  size_t decode(Bytes in, MutableBytes out) const override {
    if (in.size() < 4) throw CodecError(absl::StrCat("crc32c: expected at least 4 bytes, found ", in.size()));
    const size_t n = in.size() - 4;
    if (n > out.size()) throw CodecError(absl::StrCat("crc32c: ", n, " bytes, expected at most ", out.size()));
    uint32_t stored = 0;
    for (int i = 0; i < 4; ++i) stored |= static_cast<uint32_t>(in[n + i]) << (8 * i);
    const uint32_t actual = crc32c(in.first(n));
    if (stored != actual) {
      throw CodecError(absl::StrCat("crc32c mismatch: stored ", absl::Hex(stored, absl::kZeroPad8), ", computed ",
                                    absl::Hex(actual, absl::kZeroPad8)));
    }
    if (out.data() != in.data()) std::memmove(out.data(), in.data(), n);
    return n;
  }

  size_t encode_bound(size_t n) const override { return n + 4; }

  size_t encode(Bytes in, MutableBytes out) const override {
    if (out.data() != in.data()) std::memmove(out.data(), in.data(), in.size());
    const uint32_t c = crc32c(in);
    for (int i = 0; i < 4; ++i) out[in.size() + i] = static_cast<std::byte>((c >> (8 * i)) & 0xFF);
    return in.size() + 4;
  }

  size_t encoded_size(size_t decoded) const override { return decoded + 4; }
  size_t decoded_size(size_t encoded) const override { return encoded >= 4 ? encoded - 4 : 0; }

  json v2_json() const override { return {{"id", "crc32c"}}; }
  json v3_json() const override { return {{"name", "crc32c"}}; }

  static uint32_t crc32c(Bytes in) { return crc32c_checksum(in); }
};

CodecPtr crc32c_make(const json&, const Context&) { return std::make_shared<Crc32c>(); }

}  // namespace

const CodecType kCrc32c = {"crc32c", nullptr, &crc32c_make, nullptr};

}  // namespace tessera::array::codec
