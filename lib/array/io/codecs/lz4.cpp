// lz4 (liblz4) in numcodecs' framing: the decoded size as 4 little-endian bytes,
// then one lz4 block.
#include <lz4.h>

#include <cstring>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

class Lz4 final : public Codec {
 public:
  explicit Lz4(int acceleration) : acceleration_(acceleration) {}

  std::string name() const override { return "lz4"; }
  std::string describe() const override { return absl::StrCat("lz4(acceleration=", acceleration_, ")"); }

  size_t decode(Bytes in, MutableBytes out) const override {
    if (in.size() < 4)
      throw CodecError(absl::StrCat("lz4: expected a 4-byte size header, found ", in.size(), " bytes"));
    uint32_t declared = 0;
    for (int i = 0; i < 4; ++i) declared |= static_cast<uint32_t>(in[i]) << (8 * i);
    if (declared > out.size() || declared > static_cast<uint32_t>(INT32_MAX)) {
      throw CodecError(absl::StrCat("lz4: the block holds ", declared, " bytes, expected at most ", out.size()));
    }
    const int n = LZ4_decompress_safe(reinterpret_cast<const char*>(in.data()) + 4, reinterpret_cast<char*>(out.data()),
                                      static_cast<int>(in.size() - 4), static_cast<int>(declared));
    if (n < 0 || static_cast<uint32_t>(n) != declared) throw CodecError("lz4: corrupt block");
    return declared;
  }

  // LZ4_COMPRESSBOUND's formula, also past LZ4_MAX_INPUT_SIZE (where LZ4_compressBound gives 0).
  size_t encode_bound(size_t n) const override { return 4 + n + n / 255 + 16; }

  size_t encode(Bytes in, MutableBytes out) const override {
    if (in.size() > static_cast<size_t>(LZ4_MAX_INPUT_SIZE))
      throw CodecError("lz4: a chunk over 2 GiB cannot be compressed");
    for (int i = 0; i < 4; ++i) out[i] = static_cast<std::byte>((in.size() >> (8 * i)) & 0xFF);
    const int n = LZ4_compress_fast(reinterpret_cast<const char*>(in.data()), reinterpret_cast<char*>(out.data()) + 4,
                                    static_cast<int>(in.size()), static_cast<int>(out.size() - 4), acceleration_);
    if (n <= 0) throw CodecError("lz4: compression failed");
    return 4 + static_cast<size_t>(n);
  }

  json v2_json() const override { return {{"id", "lz4"}, {"acceleration", acceleration_}}; }
  json v3_json() const override { return nullptr; }

 private:
  int acceleration_;
};

CodecPtr lz4_v2(const json& c, const Context& context) {
  return std::make_shared<Lz4>(static_cast<int>(int_field(c, "acceleration", 1, 1, 65537, "lz4", context)));
}

CodecPtr lz4_spec(const std::vector<std::string>& args, const Context&) {
  if (args.size() > 1) throw CodecSpecError("codec lz4: expected lz4:ACCELERATION");
  return std::make_shared<Lz4>(static_cast<int>(spec_int(args, 0, 1, 1, 65537, "lz4")));
}

}  // namespace

const CodecType kLz4 = {"lz4", &lz4_v2, nullptr, &lz4_spec};

}  // namespace tessera::array::codec
