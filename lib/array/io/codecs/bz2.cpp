// bz2 (libbz2): one bzip2 stream per chunk, as Python's bz2.compress makes.
#include <bzlib.h>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

class Bz2 final : public Codec {
 public:
  explicit Bz2(int level) : level_(level) {}

  std::string name() const override { return "bz2"; }
  std::string describe() const override { return absl::StrCat("bz2(level=", level_, ")"); }

  size_t decode(Bytes in, MutableBytes out) const override {
    auto n = static_cast<unsigned int>(out.size());
    const int rc = BZ2_bzBuffToBuffDecompress(reinterpret_cast<char*>(out.data()), &n,
                                              const_cast<char*>(reinterpret_cast<const char*>(in.data())),
                                              static_cast<unsigned int>(in.size()), 0, 0);
    if (rc == BZ_OUTBUFF_FULL) {
      throw CodecError(absl::StrCat("bz2: the stream holds more than the expected ", out.size(), " bytes"));
    }
    if (rc != BZ_OK) throw CodecError(absl::StrCat("bz2: corrupt stream (error ", rc, ")"));
    return n;
  }

  size_t encode_bound(size_t n) const override { return n + n / 100 + 600; }  // bzlib's documented bound

  size_t encode(Bytes in, MutableBytes out) const override {
    auto n = static_cast<unsigned int>(out.size());
    const int rc = BZ2_bzBuffToBuffCompress(reinterpret_cast<char*>(out.data()), &n,
                                            const_cast<char*>(reinterpret_cast<const char*>(in.data())),
                                            static_cast<unsigned int>(in.size()), level_, 0, 0);
    if (rc != BZ_OK) throw CodecError(absl::StrCat("bz2: compression failed (error ", rc, ")"));
    return n;
  }

  json v2_json() const override { return {{"id", "bz2"}, {"level", level_}}; }
  json v3_json() const override { return nullptr; }

 private:
  int level_;
};

CodecPtr bz2_v2(const json& c, const Context& context) {
  return std::make_shared<Bz2>(static_cast<int>(int_field(c, "level", 1, 1, 9, "bz2", context)));
}

CodecPtr bz2_spec(const std::vector<std::string>& args, const Context&) {
  if (args.size() > 1) throw CodecSpecError("codec bz2: expected bz2:LEVEL");
  return std::make_shared<Bz2>(static_cast<int>(spec_int(args, 0, 1, 1, 9, "bz2")));
}

}  // namespace

const CodecType kBz2 = {"bz2", &bz2_v2, nullptr, &bz2_spec};

}  // namespace tessera::array::codec
