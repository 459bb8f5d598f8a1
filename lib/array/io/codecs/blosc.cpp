// blosc (c-blosc 1.21): a meta-compressor whose frames carry their own
// compressor, shuffle and sizes, so decoding needs no parameters. Shuffle
// applies to `typesize`-byte elements: zarr v2 takes it from the array's dtype,
// v3 writes it in the configuration.
#include <blosc.h>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

const char* const kShuffleNames[] = {"noshuffle", "shuffle", "bitshuffle"};
const char* const kCnames[] = {"blosclz", "lz4", "lz4hc", "zlib", "zstd"};

class Blosc final : public Codec {
 public:
  Blosc(std::string cname, int clevel, int shuffle, size_t typesize, size_t blocksize)
      : cname_(std::move(cname)), clevel_(clevel), shuffle_(shuffle), typesize_(typesize), blocksize_(blocksize) {}

  std::string name() const override { return "blosc"; }
  std::string describe() const override {
    return absl::StrCat("blosc(cname=", cname_, ", clevel=", clevel_, ", shuffle=", kShuffleNames[shuffle_],
                        ", typesize=", typesize_, ")");
  }

  size_t decode(Bytes in, MutableBytes out) const override {
    size_t nbytes = 0;
    if (in.size() < BLOSC_MIN_HEADER_LENGTH || blosc_cbuffer_validate(in.data(), in.size(), &nbytes) != 0) {
      throw CodecError(absl::StrCat("blosc: not a valid blosc frame (", in.size(), " bytes)"));
    }
    if (nbytes > out.size()) {
      throw CodecError(absl::StrCat("blosc: the frame holds ", nbytes, " bytes, expected at most ", out.size()));
    }
    const int n = blosc_decompress_ctx(in.data(), out.data(), out.size(), 1);
    if (n < 0 || static_cast<size_t>(n) != nbytes) {
      throw CodecError(absl::StrCat("blosc: corrupt frame (decompression returned ", n, ")"));
    }
    return nbytes;
  }

  size_t encode_bound(size_t n) const override { return n + BLOSC_MAX_OVERHEAD; }

  size_t encode(Bytes in, MutableBytes out) const override {
    const int n = blosc_compress_ctx(clevel_, shuffle_, typesize_, in.size(), in.data(), out.data(), out.size(),
                                     cname_.c_str(), blocksize_, 1);
    if (n <= 0) throw CodecError(absl::StrCat("blosc: compression failed (", n, ")"));
    return static_cast<size_t>(n);
  }

  json v2_json() const override {
    return {{"id", "blosc"}, {"cname", cname_}, {"clevel", clevel_}, {"shuffle", shuffle_},
            {"blocksize", blocksize_}};
  }
  json v3_json() const override {
    return {{"name", "blosc"},
            {"configuration",
             {{"cname", cname_}, {"clevel", clevel_}, {"shuffle", kShuffleNames[shuffle_]},
              {"typesize", typesize_}, {"blocksize", blocksize_}}}};
  }

 private:
  std::string cname_;
  int clevel_;
  int shuffle_;  // BLOSC_NOSHUFFLE, BLOSC_SHUFFLE, BLOSC_BITSHUFFLE
  size_t typesize_;
  size_t blocksize_;
};

std::string checked_cname(const std::string& cname, const Context& context) {
  for (const char* c : kCnames) {
    if (cname == c) return cname;
  }
  bad_config("blosc", absl::StrCat("expected cname blosclz, lz4, lz4hc, zlib or zstd, found '", cname, "'"), context);
}

CodecPtr blosc_v2(const json& c, const Context& context) {
  const std::string cname = checked_cname(string_field(c, "cname", "lz4", "blosc", context), context);
  const int clevel = static_cast<int>(int_field(c, "clevel", 5, 0, 9, "blosc", context));
  int shuffle = static_cast<int>(int_field(c, "shuffle", 1, -1, 2, "blosc", context));
  const size_t typesize = context.dtype.itemsize();
  if (shuffle == -1) shuffle = typesize == 1 ? BLOSC_BITSHUFFLE : BLOSC_SHUFFLE;  // numcodecs' AUTOSHUFFLE
  const auto blocksize = static_cast<size_t>(int_field(c, "blocksize", 0, 0, INT32_MAX, "blosc", context));
  return std::make_shared<Blosc>(cname, clevel, shuffle, typesize, blocksize);
}

CodecPtr blosc_v3(const json& c, const Context& context) {
  const std::string cname = checked_cname(string_field(c, "cname", "zstd", "blosc", context), context);
  const int clevel = static_cast<int>(int_field(c, "clevel", 5, 0, 9, "blosc", context));
  const std::string shuffle = string_field(c, "shuffle", "noshuffle", "blosc", context);
  int s = -1;
  for (int i = 0; i < 3; ++i) {
    if (shuffle == kShuffleNames[i]) s = i;
  }
  if (s < 0)
    bad_config("blosc", absl::StrCat("expected shuffle noshuffle, shuffle or bitshuffle, found '", shuffle, "'"),
               context);
  const auto typesize = static_cast<size_t>(
      int_field(c, "typesize", static_cast<int64_t>(context.dtype.itemsize()), 1, 255, "blosc", context));
  const auto blocksize = static_cast<size_t>(int_field(c, "blocksize", 0, 0, INT32_MAX, "blosc", context));
  return std::make_shared<Blosc>(cname, clevel, s, typesize, blocksize);
}

CodecPtr blosc_spec(const std::vector<std::string>& args, const Context& context) {
  const std::string cname = args.size() > 0 && !args[0].empty() ? args[0] : "lz4";
  bool known = false;
  for (const char* c : kCnames) known = known || cname == c;
  if (!known)
    throw CodecSpecError("codec blosc: expected CNAME blosclz, lz4, lz4hc, zlib or zstd, found '" + cname + "'");
  const int clevel = static_cast<int>(spec_int(args, 1, 5, 0, 9, "blosc"));
  int s = BLOSC_SHUFFLE;
  if (args.size() > 2) {
    s = -1;
    for (int i = 0; i < 3; ++i) {
      if (args[2] == kShuffleNames[i]) s = i;
    }
    if (s < 0)
      throw CodecSpecError("codec blosc: expected SHUFFLE noshuffle, shuffle or bitshuffle, found '" + args[2] + "'");
  }
  if (args.size() > 3) throw CodecSpecError("codec blosc: expected at most blosc:CNAME:LEVEL:SHUFFLE");
  return std::make_shared<Blosc>(cname, clevel, s, context.dtype.itemsize(), 0);
}

}  // namespace

const CodecType kBlosc = {"blosc", &blosc_v2, &blosc_v3, &blosc_spec};

}  // namespace tessera::array::codec
