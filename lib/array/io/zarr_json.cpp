#include "array/io/zarr_json.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <bit>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <algorithm>
#include <fstream>
#include <limits>
#include <utility>
#include <vector>

#include <absl/strings/str_cat.h>

#include "storage/regular_file.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::zarr::detail {
namespace {

// zarr writes NaN and the infinities as strings; v3 also as hex bit patterns
// ("0x7fc00000" for a float32, "0x7e00" for a float16).
std::optional<double> json_real(const json& v, DType dtype) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s == "NaN") return std::nan("");
  if (s == "Infinity") return HUGE_VAL;
  if (s == "-Infinity") return -HUGE_VAL;
  const size_t width = dtype.is_complex() ? dtype.itemsize() / 2 : dtype.itemsize();
  if (s.size() == 2 + 2 * width && s.compare(0, 2, "0x") == 0) {
    uint64_t bits = 0;
    for (size_t i = 2; i < s.size(); ++i) {
      const char c = s[i];
      const int d = c >= '0' && c <= '9'   ? c - '0'
                    : c >= 'a' && c <= 'f' ? c - 'a' + 10
                    : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                           : -1;
      if (d < 0) return std::nullopt;
      bits = bits << 4 | static_cast<uint64_t>(d);
    }
    if (width == 2) return static_cast<double>(Eigen::numext::bit_cast<Eigen::half>(static_cast<uint16_t>(bits)));
    if (width == 4) return static_cast<double>(std::bit_cast<float>(static_cast<uint32_t>(bits)));
    if (width == 8) return std::bit_cast<double>(bits);
  }
  return std::nullopt;
}

json real_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

}  // namespace

std::string quote(const json& v) {
  std::string s = v.dump();
  return s.size() > 80 ? s.substr(0, 77) + "..." : s;
}

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw StorageError(path, absl::StrCat("bad zarr metadata: ", what));
}

size_t json_depth(std::string_view text, size_t limit) {
  size_t depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (const char c : text) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
    } else if (c == '"') {
      in_string = true;
    } else if (c == '[' || c == '{') {
      deepest = std::max(deepest, ++depth);
      if (deepest > limit) break;
    } else if ((c == ']' || c == '}') && depth > 0) {
      --depth;
    }
  }
  return deepest;
}

json parse_document(const std::string& text, const std::string& path) {
  // Counted before parsing: the parser builds every level it meets, so a
  // document of 16 MiB of '[' would take gigabytes before any check after it.
  if (json_depth(text, kMaxDepth) > kMaxDepth) {
    bad(path, absl::StrCat("expected JSON nested at most ", kMaxDepth, " deep, found deeper"));
  }
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) bad(path, "expected JSON, found text that does not parse");
  return doc;
}

std::string string_at(const json& obj, const char* key) {
  if (!obj.is_object()) return "";
  auto it = obj.find(key);
  return it != obj.end() && it->is_string() ? it->get<std::string>() : "";
}

const json& field(const json& meta, const char* key, const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end()) bad(path, absl::StrCat("expected the key \"", key, "\""));
  return *it;
}

Shape int_list(const json& v, const char* key, bool positive, const std::string& path) {
  if (!v.is_array()) bad(path, absl::StrCat("expected \"", key, "\" to be a list of integers, found ", quote(v)));
  if (v.size() > 64) bad(path, absl::StrCat("expected at most 64 axes in \"", key, "\", found ", v.size()));
  Shape out;
  for (const json& e : v) {
    if (!e.is_number_integer() || (e.is_number_unsigned() && e.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) ||
        e.get<int64_t>() < (positive ? 1 : 0)) {
      bad(path, absl::StrCat("expected \"", key, "\" to hold ", positive ? "positive" : "non-negative",
                             " integers, found ", quote(v)));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

std::optional<Scalar> parse_fill(const json& v, DType dtype, const std::string& path) {
  if (v.is_null()) return std::nullopt;
  std::optional<Scalar> s;
  if (dtype.kind() == 'b' && v.is_boolean()) s = Scalar(v.get<bool>());
  else if (dtype.kind() == 'b' && v.is_number_integer()) s = Scalar(v.get<int64_t>() != 0);
  else if (dtype.kind() == 'u' && v.is_number_unsigned()) s = Scalar(v.get<uint64_t>());
  else if (dtype.is_integer() && v.is_number_integer()) s = Scalar(v.get<int64_t>());
  else if (dtype.is_floating() && json_real(v, dtype)) s = Scalar(*json_real(v, dtype));
  else if (dtype.is_complex() && v.is_array() && v.size() == 2 && json_real(v[0], dtype) && json_real(v[1], dtype))
    s = Scalar(std::complex<double>(*json_real(v[0], dtype), *json_real(v[1], dtype)));
  else if (dtype.is_complex() && json_real(v, dtype)) s = Scalar(*json_real(v, dtype));
  if (!s) bad(path, absl::StrCat("expected a ", dtype.name(), " fill_value, found ", quote(v)));
  try {
    dispatch(dtype, [&]<class T>() { (void)s->to<T>(); });
  } catch (const TypeError& e) {
    bad(path, absl::StrCat("fill_value: ", e.what()));
  }
  return s;
}

json fill_json(const std::optional<Scalar>& fill, DType dtype) {
  if (!fill) return nullptr;
  if (dtype.kind() == 'b') return fill->to<bool>();
  if (dtype.kind() == 'u') return fill->to<uint64_t>();
  if (dtype.kind() == 'i') return fill->to<int64_t>();
  if (dtype.kind() == 'f') return real_json(fill->to<double>());
  auto c = fill->to<std::complex<double>>();
  return json::array({real_json(c.real()), real_json(c.imag())});
}

void check_sizes(const Shape& shape, const Shape& chunk_shape, DType dtype, const std::string& path,
                 const std::string& what) {
  const auto bad = [&](const std::string& p, const std::string& problem) {
    throw StorageError(p, absl::StrCat(what, ": ", problem));
  };
  constexpr uint64_t kMaxBytes = uint64_t{1} << 62, kMaxChunks = uint64_t{1} << 31, kMaxGrid = uint64_t{1} << 24;
  unsigned __int128 bytes = dtype.itemsize(), chunk_bytes = dtype.itemsize(), chunks = 1, grid = 0;
  for (size_t a = 0; a < shape.size(); ++a) {
    bytes *= static_cast<uint64_t>(shape[a]);
    chunk_bytes *= static_cast<uint64_t>(chunk_shape[a]);
    const uint64_t n = (static_cast<uint64_t>(shape[a]) + static_cast<uint64_t>(chunk_shape[a]) - 1) /
                       static_cast<uint64_t>(chunk_shape[a]);
    chunks *= n;
    grid += n;
    if (bytes > kMaxBytes) bytes = kMaxBytes + 1;  // saturate: 64 axes cannot overflow 128 bits then
    if (chunk_bytes > kMaxBytes) chunk_bytes = kMaxBytes + 1;
    if (chunks > kMaxChunks) chunks = kMaxChunks + 1;
  }
  if (bytes > kMaxBytes) {
    bad(path, absl::StrCat("shape ", shape_str(shape), " of ", dtype.name(), " holds more than 2^62 bytes"));
  }
  if (chunk_bytes > kMaxBytes) {
    bad(path,
        absl::StrCat("chunk shape ", shape_str(chunk_shape), " of ", dtype.name(), " holds more than 2^62 bytes"));
  }
  if (chunks > kMaxChunks || grid > kMaxGrid) {
    bad(path,
        absl::StrCat("shape ", shape_str(shape), " in chunks of ", shape_str(chunk_shape),
                     " makes more chunks than tessera handles (at most 2^31 chunks, 2^24 along all axes together)"));
  }
}

std::string read_text(const std::string& path) {
  const storage::RegularFile f = *storage::open_regular(path, O_RDONLY);
  // Counted as read, not taken from the size open_regular saw: a file can grow.
  std::string text;
  char block[64 << 10];
  for (;;) {
    const ssize_t n = ::read(f.file.fd, block, sizeof block);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) throw StorageError(path, "cannot read", errno);
    if (n == 0) return text;
    if (text.size() + static_cast<size_t>(n) > kMaxMetadataBytes) {
      throw StorageError(path, absl::StrCat("expected a metadata file of at most ", kMaxMetadataBytes >> 20,
                                            " MiB, found more"));
    }
    text.append(block, static_cast<size_t>(n));
  }
}

void write_text(const std::string& path, const std::string& text) {
  const std::string tmp = absl::StrCat(path, ".tmp-", ::getpid(), "-", std::hash<std::string>()(text));
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw StorageError(tmp, "cannot write", errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::unlink(tmp.c_str());
    throw StorageError(path, "cannot rename the temporary file into place", err);
  }
}

}  // namespace tessera::array::zarr::detail
