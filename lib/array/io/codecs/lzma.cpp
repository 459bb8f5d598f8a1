// lzma (liblzma): numcodecs' LZMA in its default .xz container (format 1) or the
// legacy .lzma one (format 2); raw streams and custom filter chains, which need
// the filters spelled out in the metadata, are refused at open.
#include <lzma.h>

#include <algorithm>

#include <absl/strings/str_cat.h>

#include "array/io/codecs/codec.hpp"

namespace tessera::array::codec {
namespace {

using nlohmann::json;

class Lzma final : public Codec {
 public:
  Lzma(int format, int preset) : format_(format), preset_(preset) {}

  std::string name() const override { return "lzma"; }
  std::string describe() const override { return absl::StrCat("lzma(format=", format_, ", preset=", preset_, ")"); }

  size_t decode(Bytes in, MutableBytes out) const override {
    lzma_stream s = LZMA_STREAM_INIT;
    if (lzma_auto_decoder(&s, UINT64_MAX, 0) != LZMA_OK) throw CodecError("lzma: cannot start the decoder");
    s.next_in = reinterpret_cast<const uint8_t*>(in.data());
    s.avail_in = in.size();
    s.next_out = reinterpret_cast<uint8_t*>(out.data());
    s.avail_out = out.size();
    lzma_ret rc = LZMA_OK;
    while (rc == LZMA_OK && s.avail_out > 0) rc = lzma_code(&s, LZMA_FINISH);
    if (rc == LZMA_OK && s.avail_out == 0) {
      // The output is full: the stream must end here, with no byte left over.
      uint8_t extra = 0;
      s.next_out = &extra;
      s.avail_out = 1;
      rc = lzma_code(&s, LZMA_FINISH);
      if (s.avail_out == 0) rc = LZMA_BUF_ERROR;
    }
    const uint64_t total = s.total_out;
    lzma_end(&s);
    if (rc == LZMA_BUF_ERROR && total >= out.size()) {
      throw CodecError(absl::StrCat("lzma: the stream holds more than the expected ", out.size(), " bytes"));
    }
    if (rc != LZMA_STREAM_END)
      throw CodecError(absl::StrCat("lzma: corrupt stream (error ", static_cast<int>(rc), ")"));
    return static_cast<size_t>(total);
  }

  // xz (LZMA2) stores what it cannot compress; the .lzma format (LZMA1, which
  // numcodecs writes with format=2) cannot, and grows random bytes by about
  // 1.5%: 1/8 more covers both, and is also the most a stored chunk may hold.
  size_t encode_bound(size_t n) const override { return std::max(lzma_stream_buffer_bound(n), n + n / 8) + 4096; }

  size_t encode(Bytes in, MutableBytes out) const override {
    size_t pos = 0;
    lzma_ret rc;
    if (format_ == 1) {
      rc = lzma_easy_buffer_encode(static_cast<uint32_t>(preset_), LZMA_CHECK_CRC64, nullptr,
                                   reinterpret_cast<const uint8_t*>(in.data()), in.size(),
                                   reinterpret_cast<uint8_t*>(out.data()), &pos, out.size());
    } else {
      lzma_options_lzma options;
      lzma_lzma_preset(&options, static_cast<uint32_t>(preset_));
      lzma_stream s = LZMA_STREAM_INIT;
      rc = lzma_alone_encoder(&s, &options);
      if (rc == LZMA_OK) {
        s.next_in = reinterpret_cast<const uint8_t*>(in.data());
        s.avail_in = in.size();
        s.next_out = reinterpret_cast<uint8_t*>(out.data());
        s.avail_out = out.size();
        while ((rc = lzma_code(&s, LZMA_FINISH)) == LZMA_OK) {
        }
        pos = s.total_out;
        lzma_end(&s);
        if (rc == LZMA_STREAM_END) rc = LZMA_OK;
      }
    }
    if (rc != LZMA_OK) throw CodecError(absl::StrCat("lzma: compression failed (error ", static_cast<int>(rc), ")"));
    return pos;
  }

  json v2_json() const override {
    return {{"id", "lzma"}, {"format", format_}, {"check", -1}, {"preset", preset_}, {"filters", nullptr}};
  }
  json v3_json() const override { return nullptr; }

 private:
  int format_;  // 1: .xz, 2: .lzma
  int preset_;
};

CodecPtr lzma_v2(const json& c, const Context& context) {
  const int format = static_cast<int>(int_field(c, "format", 1, 1, 3, "lzma", context));
  if (format == 3)
    bad_config("lzma", "raw streams (format 3) are not supported: expected format 1 (xz) or 2 (alone)", context);
  if (auto f = c.find("filters"); f != c.end() && !f->is_null()) {
    bad_config("lzma", "custom filter chains are not supported: expected \"filters\" null", context);
  }
  return std::make_shared<Lzma>(format, static_cast<int>(int_field(c, "preset", 6, 0, 9, "lzma", context)));
}

CodecPtr lzma_spec(const std::vector<std::string>& args, const Context&) {
  if (args.size() > 1) throw CodecSpecError("codec lzma: expected lzma:PRESET");
  return std::make_shared<Lzma>(1, static_cast<int>(spec_int(args, 0, 6, 0, 9, "lzma")));
}

}  // namespace

const CodecType kLzma = {"lzma", &lzma_v2, nullptr, &lzma_spec};

}  // namespace tessera::array::codec
