#include "tessera/array/io/zarr.hpp"

#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <sstream>
#include <thread>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>
#include <nlohmann/json.hpp>

#include "tessera/graph/error.hpp"

namespace tessera::array::zarr {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

std::string zarray_path(const std::string& dir) { return (fs::path(dir) / ".zarray").string(); }

[[noreturn]] void bad(const std::string& path, const std::string& what) {
  throw StorageError(path, absl::StrCat("bad .zarray: ", what));
}

const json& field(const json& meta, const char* key, const std::string& path) {
  auto it = meta.find(key);
  if (it == meta.end()) bad(path, absl::StrCat("expected the key \"", key, "\""));
  return *it;
}

Shape int_list(const json& v, const char* key, bool positive, const std::string& path) {
  if (!v.is_array()) bad(path, absl::StrCat("expected \"", key, "\" to be a list of integers, found ", v.dump()));
  Shape out;
  for (const json& e : v) {
    if (!e.is_number_integer() || e.get<int64_t>() < (positive ? 1 : 0)) {
      bad(path, absl::StrCat("expected \"", key, "\" to hold ", positive ? "positive" : "non-negative",
                             " integers, found ", v.dump()));
    }
    out.push_back(e.get<int64_t>());
  }
  return out;
}

// A codec object ({"id": "blosc", ...}) or list of them, named for the error.
std::string codec_names(const json& v) {
  auto name = [](const json& c) {
    return c.is_object() && c.contains("id") && c["id"].is_string() ? c["id"].get<std::string>() : c.dump();
  };
  if (!v.is_array()) return name(v);
  std::vector<std::string> names;
  for (const json& c : v) names.push_back(name(c));
  return absl::StrJoin(names, ", ");
}

// zarr writes NaN and the infinities as strings.
std::optional<double> json_real(const json& v) {
  if (v.is_number()) return v.get<double>();
  if (!v.is_string()) return std::nullopt;
  const std::string s = v.get<std::string>();
  if (s == "NaN") return std::nan("");
  if (s == "Infinity") return HUGE_VAL;
  if (s == "-Infinity") return -HUGE_VAL;
  return std::nullopt;
}

json real_json(double v) {
  if (std::isnan(v)) return "NaN";
  if (std::isinf(v)) return v > 0 ? "Infinity" : "-Infinity";
  return v;
}

std::optional<Scalar> parse_fill(const json& v, DType dtype, const std::string& path) {
  if (v.is_null()) return std::nullopt;
  std::optional<Scalar> s;
  if (dtype.kind() == 'b' && v.is_boolean()) s = Scalar(v.get<bool>());
  else if (dtype.kind() == 'b' && v.is_number_integer()) s = Scalar(v.get<int64_t>() != 0);
  else if (dtype.kind() == 'u' && v.is_number_unsigned()) s = Scalar(v.get<uint64_t>());
  else if (dtype.is_integer() && v.is_number_integer()) s = Scalar(v.get<int64_t>());
  else if (dtype.is_floating() && json_real(v)) s = Scalar(*json_real(v));
  else if (dtype.is_complex() && v.is_array() && v.size() == 2 && json_real(v[0]) && json_real(v[1]))
    s = Scalar(std::complex<double>(*json_real(v[0]), *json_real(v[1])));
  else if (dtype.is_complex() && json_real(v)) s = Scalar(*json_real(v));
  if (!s) bad(path, absl::StrCat("expected a ", dtype.name(), " fill_value, found ", v.dump()));
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

std::string read_text(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw StorageError(path, "cannot open", errno);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

// Writes `bytes` to `path` through a temporary file renamed into place: readers see
// the old file or the new one, never half of it.
void write_atomically(const std::string& path, const std::function<void(std::byte*)>& fill, size_t size) {
  const std::string tmp = absl::StrCat(path, ".tmp-", ::getpid(), "-", std::hash<std::thread::id>()(std::this_thread::get_id()));
  {
    auto file = MappedFile::create(tmp, size);
    fill(file->data());
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw StorageError(path, "cannot rename the temporary file into place", err);
  }
}

}  // namespace

Metadata parse_metadata(const std::string& text, const std::string& path) {
  json meta = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (meta.is_discarded()) bad(path, "expected JSON, found text that does not parse");
  if (!meta.is_object()) bad(path, absl::StrCat("expected a JSON object, found ", meta.dump()));
  const json& format = field(meta, "zarr_format", path);
  if (format != 2) bad(path, absl::StrCat("expected zarr_format 2, found ", format.dump()));
  if (const json& c = field(meta, "compressor", path); !c.is_null()) {
    throw StorageError(path, absl::StrCat("compressed zarr arrays are not supported yet: compressor '",
                                          codec_names(c), "'; expected compressor null"));
  }
  if (auto f = meta.find("filters"); f != meta.end() && !f->is_null() && !(f->is_array() && f->empty())) {
    throw StorageError(path, absl::StrCat("zarr filters are not supported: '", codec_names(*f),
                                          "'; expected filters null"));
  }
  Metadata m;
  const json& dtype = field(meta, "dtype", path);
  if (!dtype.is_string()) bad(path, absl::StrCat("expected \"dtype\" to be a type string, found ", dtype.dump()));
  try {
    m.dtype = DType::parse(dtype.get<std::string>());
  } catch (const TypeError& e) {
    bad(path, e.what());
  }
  m.shape = int_list(field(meta, "shape", path), "shape", false, path);
  m.chunk_shape = int_list(field(meta, "chunks", path), "chunks", true, path);
  if (m.chunk_shape.size() != m.shape.size()) {
    bad(path, absl::StrCat("expected one chunk size per axis of shape ", shape_str(m.shape), ", found chunks ",
                           shape_str(m.chunk_shape)));
  }
  try {
    array_nbytes(m.dtype, m.chunk_shape);
  } catch (const Error& e) {
    bad(path, absl::StrCat("chunks: ", e.what()));
  }
  const json& order = field(meta, "order", path);
  if (order != "C" && order != "F") bad(path, absl::StrCat("expected order \"C\" or \"F\", found ", order.dump()));
  m.order = order == "C" ? Order::C : Order::F;
  if (auto sep = meta.find("dimension_separator"); sep != meta.end() && !sep->is_null()) {
    if (*sep != "." && *sep != "/") {
      bad(path, absl::StrCat("expected dimension_separator \".\" or \"/\", found ", sep->dump()));
    }
    m.dimension_separator = sep->get<std::string>()[0];
  }
  m.fill_value = parse_fill(field(meta, "fill_value", path), m.dtype, path);
  return m;
}

std::string format_metadata(const Metadata& m) {
  json meta = {
      {"chunks", m.chunk_shape},
      {"compressor", nullptr},
      {"dimension_separator", std::string(1, m.dimension_separator)},
      {"dtype", m.dtype.str()},
      {"fill_value", fill_json(m.fill_value, m.dtype)},
      {"filters", nullptr},
      {"order", m.order == Order::C ? "C" : "F"},
      {"shape", m.shape},
      {"zarr_format", 2},
  };
  return meta.dump(4) + "\n";
}

Store::Store(std::string path, Metadata metadata, Access access)
    : path_(std::move(path)), meta_(std::move(metadata)), access_(access) {
  std::vector<std::vector<int64_t>> sizes;
  for (size_t a = 0; a < meta_.shape.size(); ++a) {
    sizes.push_back(normalize_chunks(meta_.chunk_shape[a], {meta_.shape[a]})[0]);
  }
  chunks_ = Chunks(std::move(sizes));
}

std::string Store::chunk_key(const std::vector<int64_t>& block) const {
  chunks_.block_shape(block);  // checks the index
  if (block.empty()) return "0";
  return absl::StrJoin(block, std::string(1, meta_.dimension_separator));
}

std::string Store::chunk_path(const std::vector<int64_t>& block) const {
  return (fs::path(path_) / chunk_key(block)).string();
}

bool Store::has_chunk(const std::vector<int64_t>& block) const {
  std::error_code ec;
  return fs::is_regular_file(chunk_path(block), ec);
}

size_t Store::chunk_nbytes() const {
  size_t n = meta_.dtype.itemsize();
  for (int64_t c : meta_.chunk_shape) n *= static_cast<size_t>(c);
  return n;
}

NDArray Store::full_chunk(Buffer bytes) const {
  const size_t item = meta_.dtype.itemsize();
  Strides strides = meta_.order == Order::C ? NDArray::c_strides(meta_.chunk_shape, item)
                                            : NDArray::f_strides(meta_.chunk_shape, item);
  return NDArray(std::move(bytes), meta_.dtype, meta_.chunk_shape, std::move(strides), 0);
}

NDArray Store::view_of(const std::vector<int64_t>& block, Buffer bytes) const {
  std::vector<Slice> trim;
  for (int64_t extent : chunks_.block_shape(block)) trim.emplace_back(0, extent);
  return full_chunk(std::move(bytes)).slice(trim);
}

bool Store::fill_is_zero() const {
  if (!meta_.fill_value) return true;
  NDArray one = NDArray::full(meta_.dtype, {}, *meta_.fill_value);
  for (size_t i = 0; i < one.nbytes(); ++i) {
    if (one.data()[i] != std::byte{0}) return false;
  }
  return true;
}

NDArray Store::read_chunk(const std::vector<int64_t>& block) const {
  const std::string file_path = chunk_path(block);
  std::error_code ec;
  if (!fs::exists(file_path, ec)) {
    return NDArray::full(meta_.dtype, chunks_.block_shape(block), meta_.fill_value.value_or(Scalar(0)));
  }
  auto file = MappedFile::open(file_path, access_);
  if (file->size() != chunk_nbytes()) {
    throw StorageError(file_path, absl::StrCat("expected an uncompressed chunk of ", chunk_nbytes(), " bytes (",
                                               meta_.dtype.name(), " ", shape_str(meta_.chunk_shape), "), found ",
                                               file->size(), " bytes"));
  }
  return view_of(block, file->region(0, file->size()));
}

NDArray Store::map_chunk(const std::vector<int64_t>& block) const {
  if (!writable()) throw StorageError(path_, "cannot write a chunk: the store was opened read-only");
  const std::string file_path = chunk_path(block);
  if (meta_.dimension_separator == '/') fs::create_directories(fs::path(file_path).parent_path());
  auto file = MappedFile::create(file_path, chunk_nbytes());  // zeros
  Buffer bytes = file->region(0, file->size());
  if (!fill_is_zero()) full_chunk(bytes).fill(*meta_.fill_value);
  return view_of(block, std::move(bytes));
}

void Store::write_chunk(const std::vector<int64_t>& block, const NDArray& data) const {
  if (!writable()) throw StorageError(path_, "cannot write a chunk: the store was opened read-only");
  const Shape expected = chunks_.block_shape(block);
  if (data.dtype() != meta_.dtype || data.shape() != expected) {
    throw Error(absl::StrCat("zarr chunk ", chunk_key(block), " of ", path_, ": expected a ", meta_.dtype.name(),
                             " array of shape ", shape_str(expected), ", found a ", data.describe()));
  }
  const std::string file_path = chunk_path(block);
  if (meta_.dimension_separator == '/') fs::create_directories(fs::path(file_path).parent_path());
  const bool padded = expected != meta_.chunk_shape;
  write_atomically(
      file_path,
      [&](std::byte* bytes) {
        Buffer buffer(std::shared_ptr<std::byte>(std::shared_ptr<std::byte>(), bytes), chunk_nbytes(), true);
        if (padded && !fill_is_zero()) full_chunk(buffer).fill(*meta_.fill_value);
        view_of(block, buffer).assign(data);
      },
      chunk_nbytes());
}

Store open(const std::string& path, Access access) {
  const std::string meta_path = zarray_path(path);
  return Store(path, parse_metadata(read_text(meta_path), meta_path), access);
}

Store create(const std::string& path, DType dtype, const Shape& shape, const Shape& chunk_shape,
             std::optional<Scalar> fill_value) {
  Metadata m;
  m.dtype = dtype;
  m.shape = shape;
  m.chunk_shape = chunk_shape;
  m.fill_value = std::move(fill_value);
  if (chunk_shape.size() != shape.size()) {
    throw ChunkError(absl::StrCat("zarr chunks ", shape_str(chunk_shape), ": expected one size per axis of shape ",
                                  shape_str(shape)));
  }
  for (size_t a = 0; a < shape.size(); ++a) {
    if (chunk_shape[a] <= 0) {
      throw ChunkError(absl::StrCat("zarr chunks ", shape_str(chunk_shape), ": expected positive sizes, found ",
                                    chunk_shape[a], " for axis ", a));
    }
    if (shape[a] < 0) throw ChunkError(absl::StrCat("shape ", shape_str(shape), " has a negative extent"));
  }
  if (m.fill_value) dispatch(dtype, [&]<class T>() { (void)m.fill_value->to<T>(); });
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw StorageError(path, "cannot create the directory", ec.value());
  const std::string meta_path = zarray_path(path);
  if (fs::exists(meta_path, ec)) throw StorageError(path, "a zarr array exists here already (.zarray)");
  const std::string text = format_metadata(m);
  write_atomically(meta_path, [&](std::byte* p) { std::memcpy(p, text.data(), text.size()); }, text.size());
  return Store(path, std::move(m), Access::ReadWrite);
}

}  // namespace tessera::array::zarr
