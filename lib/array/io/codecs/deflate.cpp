// zlib and gzip (zlib1g): the same deflate stream in two wrappers, so one file
// serves both. Decoding accepts either wrapper (windowBits 15 + 32).
#include <zlib.h>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

class Deflate final : public Codec {
 public:
  Deflate(bool gzip, int level) : gzip_(gzip), level_(level) {}

  std::string name() const override { return gzip_ ? "gzip" : "zlib"; }
  std::string describe() const override { return absl::StrCat(name(), "(level=", level_, ")"); }

  size_t decode(Bytes in, MutableBytes out) const override {
    z_stream z{};
    if (inflateInit2(&z, 15 + 32) != Z_OK) throw CodecError(name() + ": cannot start inflate");
    z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = inflate(&z, Z_FINISH);
    const size_t n = z.total_out;
    inflateEnd(&z);
    if (rc == Z_BUF_ERROR && z.avail_out == 0) {
      throw CodecError(absl::StrCat(name(), ": the stream holds more than the expected ", out.size(), " bytes"));
    }
    if (rc != Z_STREAM_END) {
      throw CodecError(absl::StrCat(name(), ": corrupt stream (", z.msg != nullptr ? z.msg : "truncated", ")"));
    }
    return n;
  }

  // zlib's conservative deflateBound (any level, window or memLevel another
  // writer may have used, not only compressBound's defaults), plus the gzip or
  // zlib wrapper: also the most a stored chunk may hold (chunk_codec.hpp).
  size_t encode_bound(size_t n) const override { return n + (n + 7) / 8 + (n + 63) / 64 + 5 + 32; }

  size_t encode(Bytes in, MutableBytes out) const override {
    z_stream z{};
    if (deflateInit2(&z, level_, Z_DEFLATED, gzip_ ? 31 : 15, 8, Z_DEFAULT_STRATEGY) != Z_OK) {
      throw CodecError(name() + ": cannot start deflate");
    }
    z.next_in = reinterpret_cast<Bytef*>(const_cast<std::byte*>(in.data()));
    z.avail_in = static_cast<uInt>(in.size());
    z.next_out = reinterpret_cast<Bytef*>(out.data());
    z.avail_out = static_cast<uInt>(out.size());
    const int rc = deflate(&z, Z_FINISH);
    const size_t n = z.total_out;
    deflateEnd(&z);
    if (rc != Z_STREAM_END) throw CodecError(name() + ": compression failed");
    return n;
  }

  json v2_json() const override { return {{"id", name()}, {"level", level_}}; }
  json v3_json() const override {
    if (!gzip_) return nullptr;
    return {{"name", "gzip"}, {"configuration", {{"level", level_}}}};
  }

 private:
  bool gzip_;
  int level_;
};

template <bool Gzip>
CodecPtr deflate_from_json(const json& c, const Context& context) {
  return std::make_shared<Deflate>(Gzip, static_cast<int>(int_field(c, "level", Gzip ? 5 : 1, 0, 9,
                                                                    Gzip ? "gzip" : "zlib", context)));
}

template <bool Gzip>
CodecPtr deflate_spec(const std::vector<std::string>& args, const Context&) {
  if (args.size() > 1)
    throw CodecSpecError(Gzip ? "codec gzip: expected gzip:LEVEL" : "codec zlib: expected zlib:LEVEL");
  return std::make_shared<Deflate>(Gzip, static_cast<int>(spec_int(args, 0, 5, 0, 9, Gzip ? "gzip" : "zlib")));
}

}  // namespace

const CodecType kZlib = {"zlib", &deflate_from_json<false>, nullptr, &deflate_spec<false>};
const CodecType kGzip = {"gzip", &deflate_from_json<true>, &deflate_from_json<true>, &deflate_spec<true>};

}  // namespace tessera::array::codec
