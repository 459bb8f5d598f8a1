#include "tessera/array/core/dtype.hpp"

#include <algorithm>
#include <array>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::array {
namespace {

constexpr std::array<std::string_view, DType::count> kNames = {
    "bool",   "int8",   "int16",   "int32",   "int64",     "uint8",     "uint16",
    "uint32", "uint64", "float16", "float32", "float64", "complex64", "complex128"};

// numpy writes '|' for types whose byte order does not matter (one byte wide).
std::string type_string(DType d) {
  return absl::StrCat(d.itemsize() == 1 ? "|" : "<", std::string(1, d.kind()), d.itemsize());
}

[[noreturn]] void throw_unknown(std::string_view text) {
  throw TypeError(absl::StrCat("unknown dtype '", std::string(text),
                               "': expected a numpy type string such as '<f8', '|b1', '<i4', '<c16', '<f2' "
                               "or a name such as 'float64', 'int32', 'bool', 'complex128', 'float16'"));
}

}  // namespace

DType DType::parse(std::string_view text) { return parse(text, nullptr); }

std::string DType::big_endian_str() const {
  std::string s = type_string(*this);
  if (itemsize() > 1) s[0] = '>';
  return s;
}

DType DType::parse(std::string_view text, bool* big_endian) {
  if (big_endian != nullptr) *big_endian = false;
  for (int i = 0; i < count; ++i) {
    if (kNames[i] == text) return static_cast<Id>(i);
  }
  if (text.size() < 2) throw_unknown(text);
  char order = text[0];
  std::string_view body = text.substr(1);
  if (order != '<' && order != '|' && order != '=' && order != '>') {
    order = '=';  // "f8" without a byte-order mark
    body = text;
  }
  if (body.size() < 2) throw_unknown(text);
  for (int i = 0; i < count; ++i) {
    DType d = static_cast<Id>(i);
    std::string s = type_string(d).substr(1);
    if (s != body) continue;
    if (order == '>' && d.itemsize() > 1 && big_endian != nullptr) {
      *big_endian = true;
    } else if (order == '>' && d.itemsize() > 1) {
      throw TypeError(absl::StrCat("dtype '", std::string(text),
                                   "' is big-endian; tessera reads little-endian data only (expected '<",
                                   std::string(body), "')"));
    }
    return d;
  }
  throw_unknown(text);
}

void byteswap(std::byte* data, size_t count, DType dtype) {
  const size_t unit = dtype.is_complex() ? dtype.itemsize() / 2 : dtype.itemsize();
  if (unit == 1) return;
  const size_t n = count * dtype.itemsize() / unit;
  for (size_t i = 0; i < n; ++i) std::reverse(data + i * unit, data + (i + 1) * unit);
}

std::string DType::str() const { return type_string(*this); }

std::string DType::name() const { return std::string(kNames[static_cast<int>(id_)]); }

}  // namespace tessera::array
