// crc32c (zarr v3): a 4-byte little-endian CRC-32C (Castagnoli) after the bytes.
// Debian 12 packages no crc32c library, so the table-driven form is here,
// eight bytes per step (slicing-by-8).
#include <array>
#include <cstring>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

using Tables = std::array<std::array<uint32_t, 256>, 8>;

constexpr Tables make_tables() {
  Tables t{};
  for (uint32_t i = 0; i < 256; ++i) {
    uint32_t c = i;
    for (int k = 0; k < 8; ++k) c = (c & 1) != 0 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
    t[0][i] = c;
  }
  for (int s = 1; s < 8; ++s) {
    for (int i = 0; i < 256; ++i) t[s][i] = (t[s - 1][i] >> 8) ^ t[0][t[s - 1][i] & 0xFF];
  }
  return t;
}

constexpr Tables kTables = make_tables();

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

  static uint32_t crc32c(Bytes in) {
    uint32_t c = 0xFFFFFFFFu;
    const auto* p = reinterpret_cast<const unsigned char*>(in.data());
    size_t n = in.size();
    while (n >= 8) {
      uint32_t lo = 0, hi = 0;
      std::memcpy(&lo, p, 4);  // little-endian hosts only, as tessera is
      std::memcpy(&hi, p + 4, 4);
      lo ^= c;
      c = kTables[7][lo & 0xFF] ^ kTables[6][(lo >> 8) & 0xFF] ^ kTables[5][(lo >> 16) & 0xFF] ^
          kTables[4][lo >> 24] ^ kTables[3][hi & 0xFF] ^ kTables[2][(hi >> 8) & 0xFF] ^
          kTables[1][(hi >> 16) & 0xFF] ^ kTables[0][hi >> 24];
      p += 8;
      n -= 8;
    }
    while (n-- > 0) c = (c >> 8) ^ kTables[0][(c ^ *p++) & 0xFF];
    return c ^ 0xFFFFFFFFu;
  }
};

CodecPtr make(const json&, const Context&) { return std::make_shared<Crc32c>(); }

}  // namespace

const CodecType kCrc32c = {"crc32c", nullptr, &make, nullptr};

}  // namespace tessera::array::codec
