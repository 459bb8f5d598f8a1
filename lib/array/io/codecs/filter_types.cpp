#include "array/io/codecs/filter_types.hpp"

#include <absl/strings/str_cat.h>

namespace tessera::array::codec::detail {

DType numeric_dtype(const nlohmann::json& config, const char* key, DType fallback, const char* codec,
                    const Context& context) {
  const std::string text = string_field(config, key, fallback.str(), codec, context);
  DType d;
  try {
    d = DType::parse(text);
  } catch (const TypeError& e) {
    bad_config(codec, absl::StrCat("\"", key, "\": ", e.what()), context);
  }
  if (d.kind() == 'b' || d.is_complex()) {
    bad_config(codec, absl::StrCat("expected \"", key, "\" to be an integer or float type, found '", text, "'"),
               context);
  }
  return d;
}

size_t element_count(Bytes in, DType from, MutableBytes out, DType to, const char* codec) {
  if (in.size() % from.itemsize() != 0) {
    throw CodecError(absl::StrCat(codec, ": ", in.size(), " bytes are not whole ", from.name(), " elements"));
  }
  const size_t n = in.size() / from.itemsize();
  if (n * to.itemsize() > out.size()) {
    throw CodecError(absl::StrCat(codec, ": ", n, " elements, expected at most ", out.size() / to.itemsize()));
  }
  return n;
}

DType spec_dtype(const std::vector<std::string>& args, size_t i, DType fallback, const char* codec) {
  if (i >= args.size()) return fallback;
  bool big_endian = false;
  DType d;
  try {
    d = DType::parse(args[i], &big_endian);
  } catch (const Error&) {
    throw CodecSpecError(absl::StrCat("codec ", codec, ": expected a numpy type such as <i2 or <f8, found '",
                                             args[i], "'"));
  }
  if (big_endian || d == DType::bool_() || d.kind() == 'c') {
    throw CodecSpecError(absl::StrCat("codec ", codec, ": expected a little-endian integer or float type, found '",
                                             args[i], "'"));
  }
  return d;
}

}  // namespace tessera::array::codec::detail
