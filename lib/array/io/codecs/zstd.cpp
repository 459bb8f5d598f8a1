// zstd (libzstd): one frame per chunk. Decoding checks the frame's declared
// size against the caller's buffer before writing anything.
#include <zstd.h>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

class Zstd final : public Codec {
 public:
  Zstd(int level, bool checksum) : level_(level), checksum_(checksum) {}

  std::string name() const override { return "zstd"; }
  std::string describe() const override {
    return absl::StrCat("zstd(level=", level_, checksum_ ? ", checksum" : "", ")");
  }

  size_t decode(Bytes in, MutableBytes out) const override {
    const unsigned long long declared = ZSTD_getFrameContentSize(in.data(), in.size());
    if (declared == ZSTD_CONTENTSIZE_ERROR)
      throw CodecError(absl::StrCat("zstd: not a zstd frame (", in.size(), " bytes)"));
    if (declared != ZSTD_CONTENTSIZE_UNKNOWN && declared > out.size()) {
      throw CodecError(absl::StrCat("zstd: the frame holds ", declared, " bytes, expected at most ", out.size()));
    }
    thread_local ZSTD_DCtx* dctx = ZSTD_createDCtx();  // one per worker thread, for the life of the thread
    const size_t n = ZSTD_decompressDCtx(dctx, out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) throw CodecError(absl::StrCat("zstd: corrupt frame (", ZSTD_getErrorName(n), ")"));
    return n;
  }

  size_t encode_bound(size_t n) const override { return ZSTD_compressBound(n); }

  size_t encode(Bytes in, MutableBytes out) const override {
    thread_local ZSTD_CCtx* cctx = ZSTD_createCCtx();
    ZSTD_CCtx_reset(cctx, ZSTD_reset_session_and_parameters);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_compressionLevel, level_);
    ZSTD_CCtx_setParameter(cctx, ZSTD_c_checksumFlag, checksum_ ? 1 : 0);
    const size_t n = ZSTD_compress2(cctx, out.data(), out.size(), in.data(), in.size());
    if (ZSTD_isError(n)) throw CodecError(absl::StrCat("zstd: compression failed (", ZSTD_getErrorName(n), ")"));
    return n;
  }

  json v2_json() const override { return {{"id", "zstd"}, {"level", level_}}; }
  json v3_json() const override {
    return {{"name", "zstd"}, {"configuration", {{"level", level_}, {"checksum", checksum_}}}};
  }

 private:
  int level_;
  bool checksum_;
};

CodecPtr zstd_v2(const json& c, const Context& context) {
  const int level = static_cast<int>(int_field(c, "level", 1, -131072, 22, "zstd", context));
  auto it = c.find("checksum");
  const bool checksum = it != c.end() && it->is_boolean() && it->get<bool>();
  return std::make_shared<Zstd>(level, checksum);
}

CodecPtr zstd_v3(const json& c, const Context& context) {
  const int level = static_cast<int>(int_field(c, "level", 0, -131072, 22, "zstd", context));
  auto it = c.find("checksum");
  if (it != c.end() && !it->is_boolean()) bad_config("zstd", "expected \"checksum\" to be true or false", context);
  return std::make_shared<Zstd>(level, it != c.end() && it->get<bool>());
}

CodecPtr zstd_spec(const std::vector<std::string>& args, const Context&) {
  if (args.size() > 1) throw CodecSpecError("codec zstd: expected zstd:LEVEL");
  return std::make_shared<Zstd>(static_cast<int>(spec_int(args, 0, 3, -131072, 22, "zstd")), false);
}

}  // namespace

const CodecType kZstd = {"zstd", &zstd_v2, &zstd_v3, &zstd_spec};

}  // namespace tessera::array::codec
