// crc32c (zarr v3): a 4-byte little-endian CRC-32C (Castagnoli) after the bytes.
// Debian 12 packages no crc32c library, so it is here: the SSE4.2 crc32
// instruction where the processor has it (a shard's index is megabytes, checked
// on every read: the table-driven form took a quarter of reading a shard of
// one-byte inner chunks), else a table eight bytes per step (slicing-by-8).
#include <array>
#include <cstring>

#if defined(__x86_64__)
#include <nmmintrin.h>
#endif

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

// The CRC register after `n` more bytes, table-driven (the register, not the
// checksum: no inversion before or after).
uint32_t crc32c_table(uint32_t c, const unsigned char* p, size_t n) {
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
  return c;
}

#if defined(__x86_64__)
// a * b modulo the polynomial, bit-reflected as the register is (Mark Adler's multmodp).
constexpr uint32_t multmodp(uint32_t a, uint32_t b) {
  uint32_t m = uint32_t{1} << 31, p = 0;
  for (;;) {
    if ((a & m) != 0) {
      p ^= b;
      if ((a & (m - 1)) == 0) break;
    }
    m >>= 1;
    b = (b & 1) != 0 ? (b >> 1) ^ 0x82F63B78u : b >> 1;
  }
  return p;
}

// x^(8n) modulo the polynomial: multiplying a register by it moves the register
// past n zero bytes.
constexpr uint32_t zeros_operator(size_t n) {
  uint32_t square = uint32_t{1} << 30;  // x^1
  for (int k = 0; k < 3; ++k) square = multmodp(square, square);  // x^8: one byte
  uint32_t p = uint32_t{1} << 31;  // x^0
  for (; n != 0; n >>= 1, square = multmodp(square, square)) {
    if ((n & 1) != 0) p = multmodp(square, p);
  }
  return p;
}

// Three streams of kStream bytes at once hide the instruction's latency of three
// cycles; the registers of the second and third, started at zero, join the
// first's by the linearity of the CRC: crc(A B) = crc(A) * x^(8|B|) + crc0(B).
constexpr size_t kStream = 4096;
constexpr uint32_t kShift = zeros_operator(kStream);

__attribute__((target("sse4.2"))) uint32_t crc32c_sse42(uint32_t c, const unsigned char* p, size_t n) {
  auto word = [](const unsigned char* q) {
    uint64_t w = 0;
    std::memcpy(&w, q, 8);
    return w;
  };
  while (n >= 3 * kStream) {
    uint64_t c0 = c, c1 = 0, c2 = 0;
    for (size_t i = 0; i < kStream; i += 8) {
      c0 = _mm_crc32_u64(c0, word(p + i));
      c1 = _mm_crc32_u64(c1, word(p + kStream + i));
      c2 = _mm_crc32_u64(c2, word(p + 2 * kStream + i));
    }
    c = multmodp(kShift, multmodp(kShift, static_cast<uint32_t>(c0)) ^ static_cast<uint32_t>(c1)) ^
        static_cast<uint32_t>(c2);
    p += 3 * kStream;
    n -= 3 * kStream;
  }
  uint64_t c64 = c;
  for (; n >= 8; p += 8, n -= 8) c64 = _mm_crc32_u64(c64, word(p));
  c = static_cast<uint32_t>(c64);
  for (; n > 0; ++p, --n) c = _mm_crc32_u8(c, *p);
  return c;
}

bool have_sse42() {
  static const bool yes = [] {
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2") != 0;
  }();
  return yes;
}
#endif

}  // namespace

uint32_t crc32c_checksum(Bytes in, bool portable) {
  const auto* p = reinterpret_cast<const unsigned char*>(in.data());
  uint32_t c = 0xFFFFFFFFu;
#if defined(__x86_64__)
  if (!portable && have_sse42()) return crc32c_sse42(c, p, in.size()) ^ 0xFFFFFFFFu;
#endif
  (void)portable;
  return crc32c_table(c, p, in.size()) ^ 0xFFFFFFFFu;
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

CodecPtr make(const json&, const Context&) { return std::make_shared<Crc32c>(); }

}  // namespace

const CodecType kCrc32c = {"crc32c", nullptr, &make, nullptr};

}  // namespace tessera::array::codec
