#include "tessera/array/io/npy.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/io/py_literal.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::npy {
namespace {

constexpr char kMagic[] = "\x93NUMPY";
constexpr size_t kMagicLength = 6;
constexpr size_t kAlign = 64;  // numpy aligns the data to 64 bytes

using detail::PyLiteral;

uint32_t read_le(const std::byte* p, size_t n) {
  uint32_t v = 0;
  for (size_t i = 0; i < n; ++i) v |= static_cast<uint32_t>(p[i]) << (8 * i);
  return v;
}

const PyLiteral& entry(const PyLiteral& dict, std::string_view key, PyLiteral::Kind kind, const std::string& path) {
  const PyLiteral* v = dict.find(key);
  if (v == nullptr)
    throw StorageError(path, absl::StrCat("bad .npy header: expected the key '", std::string(key), "'"));
  if (v->kind != kind) {
    PyLiteral want;
    want.kind = kind;
    throw StorageError(path, absl::StrCat("bad .npy header: expected '", std::string(key), "' to be ",
                                          want.kind_name(), ", found ", v->kind_name()));
  }
  return *v;
}

DType header_dtype(const PyLiteral& dict, bool* big_endian, const std::string& path) {
  const PyLiteral* descr = dict.find("descr");
  if (descr != nullptr && descr->kind == PyLiteral::Kind::List) {
    throw StorageError(path, "structured dtypes (a list of fields in 'descr') are not supported");
  }
  const std::string& text = entry(dict, "descr", PyLiteral::Kind::Str, path).str;
  try {
    return DType::parse(text, big_endian);
  } catch (const TypeError& e) {
    throw StorageError(path, absl::StrCat("unsupported dtype in .npy header: ", e.what()));
  }
}

// array_nbytes, with the file named in the error.
size_t checked_nbytes(DType dtype, const Shape& shape, const std::string& path) {
  try {
    return array_nbytes(dtype, shape);
  } catch (const Error& e) {
    throw StorageError(path, e.what());
  }
}

Shape header_shape(const PyLiteral& dict, DType dtype, const std::string& path) {
  Shape shape;
  for (const PyLiteral& e : entry(dict, "shape", PyLiteral::Kind::Tuple, path).items) {
    if (e.kind != PyLiteral::Kind::Int) {
      throw StorageError(path, absl::StrCat("bad .npy header: expected 'shape' to hold integers, found ",
                                            e.kind_name()));
    }
    shape.push_back(e.integer);
  }
  checked_nbytes(dtype, shape, path);
  return shape;
}

std::string header_text(DType dtype, const Shape& shape, bool fortran_order, bool big_endian) {
  std::string dims = shape.size() == 1 ? absl::StrCat("(", shape[0], ",)") : shape_str(shape);
  return absl::StrCat("{'descr': '", big_endian ? dtype.big_endian_str() : dtype.str(),
                      "', 'fortran_order': ", fortran_order ? "True" : "False", ", 'shape': ", dims, ", }");
}

// The whole preamble: magic, version, length and the dict padded with spaces and a
// newline so the data starts on a 64-byte boundary.
std::string preamble(DType dtype, const Shape& shape, bool fortran_order, bool big_endian = false) {
  std::string dict = header_text(dtype, shape, fortran_order, big_endian);
  for (int major : {1, 2}) {
    const size_t prefix = kMagicLength + 2 + (major == 1 ? 2 : 4);
    const size_t total = (prefix + dict.size() + 1 + kAlign - 1) / kAlign * kAlign;
    const size_t length = total - prefix;
    if (major == 1 && length > 0xFFFF) continue;
    std::string out(kMagic, kMagicLength);
    out += static_cast<char>(major);
    out += '\0';
    for (size_t i = 0; i < prefix - kMagicLength - 2; ++i) out += static_cast<char>((length >> (8 * i)) & 0xFF);
    out += dict;
    out.append(length - dict.size() - 1, ' ');
    out += '\n';
    return out;
  }
  return {};  // unreachable: a 4 GiB header would need 10^8 dimensions
}

}  // namespace

Header parse_header(const std::byte* data, size_t size, const std::string& path) {
  if (size < kMagicLength + 4 || std::memcmp(data, kMagic, kMagicLength) != 0) {
    throw StorageError(path, "not a .npy file: expected the magic string \\x93NUMPY at the start");
  }
  Header h;
  h.major = static_cast<int>(data[6]);
  h.minor = static_cast<int>(data[7]);
  if (h.major < 1 || h.major > 3 || h.minor != 0) {
    throw StorageError(path, absl::StrCat("unsupported .npy format version ", h.major, ".", h.minor,
                                          ": expected 1.0, 2.0 or 3.0"));
  }
  const size_t length_bytes = h.major == 1 ? 2 : 4;
  if (size < kMagicLength + 2 + length_bytes) throw StorageError(path, "truncated .npy header");
  const size_t length = read_le(data + 8, length_bytes);
  h.data_offset = kMagicLength + 2 + length_bytes + length;
  if (h.data_offset > size) {
    throw StorageError(path, absl::StrCat("truncated .npy header: it says ", length, " bytes, the file has ",
                                          size - (kMagicLength + 2 + length_bytes)));
  }
  std::string_view text(reinterpret_cast<const char*>(data) + h.data_offset - length, length);
  detail::PyLiteral dict;
  try {
    dict = detail::parse_py_literal(text);
  } catch (const detail::LiteralError& e) {
    throw StorageError(path, absl::StrCat("bad .npy header: ", e.what()));
  }
  if (dict.kind != PyLiteral::Kind::Dict) {
    throw StorageError(path, absl::StrCat("bad .npy header: expected a dict, found ", dict.kind_name()));
  }
  h.dtype = header_dtype(dict, &h.big_endian, path);
  h.fortran_order = entry(dict, "fortran_order", PyLiteral::Kind::Bool, path).boolean;
  h.shape = header_shape(dict, h.dtype, path);
  if (h.data_offset % h.dtype.itemsize() != 0) {
    throw StorageError(path, absl::StrCat("the data starts at byte ", h.data_offset, ", not aligned to its ",
                                          h.dtype.itemsize(), "-byte elements"));
  }
  return h;
}

namespace {

// The header's promise against the file's real size: the data of an array of
// its shape and dtype, no more and no less. Returns the data's size.
size_t check_data_size(const Header& h, size_t file_size, const std::string& path) {
  const size_t nbytes = checked_nbytes(h.dtype, h.shape, path);
  if (file_size - h.data_offset != nbytes) {
    throw StorageError(path, absl::StrCat("the header promises ", nbytes, " bytes of data for a ", h.dtype.name(),
                                          " array of shape ", shape_str(h.shape), " (", h.data_offset + nbytes,
                                          " bytes in all), but the file has ", file_size - h.data_offset,
                                          " bytes of data (", file_size, " bytes in all)"));
  }
  return nbytes;
}

}  // namespace

Header read_header(const std::string& path) {
  auto file = MappedFile::open(path);
  Header h = parse_header(file->data(), file->size(), path);
  check_data_size(h, file->size(), path);
  return h;
}

NDArray open(const std::string& path, Access access) {
  auto file = MappedFile::open(path, access);
  Header h = parse_header(file->data(), file->size(), path);
  const size_t nbytes = check_data_size(h, file->size(), path);
  if (h.big_endian && access == Access::ReadWrite) {
    throw StorageError(path, "a big-endian .npy file cannot be opened read-write (its elements are swapped on read)");
  }
  Strides strides = h.fortran_order ? NDArray::f_strides(h.shape, h.dtype.itemsize())
                                    : NDArray::c_strides(h.shape, h.dtype.itemsize());
  NDArray view(file->region(h.data_offset, nbytes), h.dtype, std::move(h.shape), std::move(strides), 0);
  return h.big_endian ? to_native(view) : view;
}

NDArray to_native(const NDArray& big_endian) {
  NDArray out = NDArray::empty(big_endian.dtype(), big_endian.shape());
  out.assign(big_endian);  // the bytes, as they are; then swapped in place
  byteswap(out.data(), static_cast<size_t>(out.size()), out.dtype());
  return out;
}

NDArray create(const std::string& path, DType dtype, const Shape& shape, bool fortran_order) {
  const std::string head = preamble(dtype, shape, fortran_order);
  const size_t nbytes = checked_nbytes(dtype, shape, path);
  auto file = MappedFile::create(path, head.size() + nbytes);
  std::memcpy(file->data(), head.data(), head.size());
  Strides strides =
      fortran_order ? NDArray::f_strides(shape, dtype.itemsize()) : NDArray::c_strides(shape, dtype.itemsize());
  return NDArray(file->region(head.size(), nbytes), dtype, shape, std::move(strides), 0);
}

void save(const std::string& path, const NDArray& array, bool big_endian) {
  if (!big_endian) {
    create(path, array.dtype(), array.shape()).assign(array);
    return;
  }
  const std::string head = preamble(array.dtype(), array.shape(), false, true);
  auto file = MappedFile::create(path, head.size() + array.nbytes());
  std::memcpy(file->data(), head.data(), head.size());
  NDArray out(file->region(head.size(), array.nbytes()), array.dtype(), array.shape(),
              NDArray::c_strides(array.shape(), array.dtype().itemsize()), 0);
  out.assign(array);
  byteswap(out.data(), static_cast<size_t>(out.size()), out.dtype());
}

}  // namespace tessera::array::npy
