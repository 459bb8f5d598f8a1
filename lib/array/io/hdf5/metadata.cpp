// A dataset's header read from the file: its type mapped to a dtype, its
// layout, filters, fill value, dimension scales and attributes (state.hpp).
// Every function here runs with libhdf5's lock held by its caller.
#include <hdf5.h>
#include <hdf5_hl.h>

#include <cstring>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/io/hdf5/state.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::hdf5::detail {
namespace {

// The type as HDF5's DDL writes it ("H5T_STRING { STRSIZE 5; ... }"), cut short.
std::string type_text(hid_t type) {
  size_t len = 0;
  if (H5LTdtype_to_text(type, nullptr, H5LT_DDL, &len) < 0 || len == 0) {
    H5Eclear2(H5E_DEFAULT);
    return "a type tessera cannot print";
  }
  std::string text(len, '\0');
  H5LTdtype_to_text(type, text.data(), H5LT_DDL, &len);
  text.resize(std::strlen(text.c_str()));
  for (char& c : text) {
    if (c == '\n' || c == '\t') c = ' ';
  }
  text.erase(std::unique(text.begin(), text.end(), [](char a, char b) { return a == ' ' && b == ' '; }), text.end());
  return text.size() > 120 ? text.substr(0, 117) + "..." : text;
}

[[noreturn]] void refuse_type(hid_t type, const std::string& file, const std::string& dataset, const char* kind) {
  throw StorageError(file, absl::StrCat("dataset ", dataset, ": expected a numeric type (integer, float, complex, ",
                                        "bool), found ", kind, ": ", type_text(type)));
}

// An IEEE float of `size` bytes: h5py's float16 is one, a 'custom' float is not.
bool ieee(hid_t type, size_t size) {
  size_t spos = 0, epos = 0, esize = 0, mpos = 0, msize = 0;
  if (H5Tget_fields(type, &spos, &epos, &esize, &mpos, &msize) < 0) return false;
  switch (size) {
    case 2: return spos == 15 && epos == 10 && esize == 5 && mpos == 0 && msize == 10;
    case 4: return spos == 31 && epos == 23 && esize == 8 && mpos == 0 && msize == 23;
    case 8: return spos == 63 && epos == 52 && esize == 11 && mpos == 0 && msize == 52;
    default: return false;
  }
}

std::string member_name(hid_t type, unsigned i) {
  char* name = H5Tget_member_name(type, i);
  std::string s = name != nullptr ? name : "";
  H5free_memory(name);
  return s;
}

// h5py's complex numbers: a compound of two equal floats named r and i.
bool complex_pair(hid_t type, size_t size, bool* big_endian) {
  if (H5Tget_nmembers(type) != 2 || member_name(type, 0) != "r" || member_name(type, 1) != "i") return false;
  const Handle r(H5Tget_member_type(type, 0)), i(H5Tget_member_type(type, 1));
  const size_t half = size / 2;
  if (H5Tget_class(r.get()) != H5T_FLOAT || H5Tequal(r.get(), i.get()) <= 0 || H5Tget_size(r.get()) != half ||
      (half != 4 && half != 8) || !ieee(r.get(), half) || H5Tget_member_offset(type, 1) != half) {
    return false;
  }
  *big_endian = H5Tget_order(r.get()) == H5T_ORDER_BE;
  return true;
}

// h5py's bool: an enum of int8 with FALSE = 0 and TRUE = 1.
bool bool_enum(hid_t type) {
  if (H5Tget_size(type) != 1 || H5Tget_nmembers(type) != 2) return false;
  int8_t v0 = 0, v1 = 0;
  H5Tget_member_value(type, 0, &v0);
  H5Tget_member_value(type, 1, &v1);
  return member_name(type, 0) == "FALSE" && v0 == 0 && member_name(type, 1) == "TRUE" && v1 == 1;
}

DType integer(size_t size, bool is_signed) {
  switch (size) {
    case 1: return is_signed ? DType::int8() : DType::uint8();
    case 2: return is_signed ? DType::int16() : DType::uint16();
    case 4: return is_signed ? DType::int32() : DType::uint32();
    default: return is_signed ? DType::int64() : DType::uint64();
  }
}

// Bookkeeping attributes of dimension scales and NetCDF-4, not the user's.
bool hidden(const std::string& name) {
  for (const char* h : {"DIMENSION_LIST", "REFERENCE_LIST", "CLASS", "NAME", "_Netcdf4Dimid", "_Netcdf4Coordinates",
                        "_nc3_strict", "_NCProperties", "_Netcdf4Dimid"}) {
    if (name == h) return true;
  }
  return false;
}

std::string number(double v) {
  std::string s = absl::StrCat(v);
  return s;
}

// One attribute's value, printed: numbers (up to 8), strings, or its kind.
std::string attribute_value(hid_t attr) {
  const Handle type(H5Aget_type(attr)), space(H5Aget_space(attr));
  const hssize_t n = H5Sget_simple_extent_npoints(space.get());
  const H5T_class_t cls = H5Tget_class(type.get());
  if (n < 0) return "(unreadable)";
  if (cls == H5T_STRING && n == 1) {
    if (H5Tis_variable_str(type.get()) > 0) {
      const Handle mem(H5Tcopy(H5T_C_S1));
      H5Tset_size(mem.get(), H5T_VARIABLE);
      H5Tset_cset(mem.get(), H5Tget_cset(type.get()));  // h5py writes UTF-8
      char* s = nullptr;
      if (H5Aread(attr, mem.get(), &s) < 0 || s == nullptr) return "(unreadable string)";
      std::string out(s);
      H5free_memory(s);
      return absl::StrCat("\"", out.size() > 80 ? out.substr(0, 77) + "..." : out, "\"");
    }
    std::string s(H5Tget_size(type.get()), '\0');
    const Handle mem(H5Tcopy(type.get()));
    if (H5Aread(attr, mem.get(), s.data()) < 0) return "(unreadable string)";
    s.resize(std::strlen(s.c_str()));
    return absl::StrCat("\"", s.size() > 80 ? s.substr(0, 77) + "..." : s, "\"");
  }
  if ((cls == H5T_INTEGER || cls == H5T_FLOAT) && n >= 1 && n <= 8) {
    std::vector<double> v(static_cast<size_t>(n));
    if (H5Aread(attr, H5T_NATIVE_DOUBLE, v.data()) < 0) return "(unreadable)";
    std::vector<std::string> parts;
    for (double d : v) parts.push_back(number(d));
    return n == 1 ? parts[0] : absl::StrCat("[", absl::StrJoin(parts, ", "), "]");
  }
  return absl::StrCat("(", n, " values of ", type_text(type.get()), ")");
}

herr_t collect_attribute(hid_t object, const char* name, const H5A_info_t*, void* out) {
  auto& list = *static_cast<std::vector<Attribute>*>(out);
  if (hidden(name)) return 0;
  const Handle attr(H5Aopen(object, name, H5P_DEFAULT));
  list.push_back({name, attr.valid() ? attribute_value(attr.get()) : "(unreadable)"});
  H5Eclear2(H5E_DEFAULT);
  return list.size() >= 100 ? 1 : 0;
}

herr_t scale_name(hid_t, unsigned, hid_t scale, void* out) {
  char buf[1024] = {};
  const ssize_t n = H5Iget_name(scale, buf, sizeof buf);
  std::string full = n > 0 ? std::string(buf, static_cast<size_t>(std::min<ssize_t>(n, sizeof buf - 1))) : "";
  *static_cast<std::string*>(out) = full.substr(full.rfind('/') + 1);
  return 1;  // the first scale names the axis
}

std::vector<std::string> dimension_names(hid_t dataset, size_t rank) {
  std::vector<std::string> names(rank);
  bool any = false;
  for (size_t a = 0; a < rank; ++a) {
    if (H5DSget_num_scales(dataset, static_cast<unsigned>(a)) <= 0) continue;
    H5DSiterate_scales(dataset, static_cast<unsigned>(a), nullptr, &scale_name, &names[a]);
    any = any || !names[a].empty();
  }
  H5Eclear2(H5E_DEFAULT);
  if (!any) names.clear();
  return names;
}

std::optional<Scalar> fill_value(hid_t dcpl, DType dtype, hid_t memory) {
  H5D_fill_value_t status{};
  if (H5Pfill_value_defined(dcpl, &status) < 0 || status == H5D_FILL_VALUE_UNDEFINED) return std::nullopt;
  std::vector<std::byte> bytes(dtype.itemsize());
  if (H5Pget_fill_value(dcpl, memory, bytes.data()) < 0) {
    H5Eclear2(H5E_DEFAULT);
    return std::nullopt;
  }
  return dispatch(dtype, [&]<class T>() {
    T v{};
    std::memcpy(&v, bytes.data(), sizeof v);
    return Scalar(v);
  });
}

std::vector<Filter> filters(hid_t dcpl, std::vector<FilterStep>* steps) {
  std::vector<Filter> out;
  const int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; ++i) {
    unsigned flags = 0, config = 0;
    size_t nvalues = 16;
    unsigned values[16] = {};
    char name[256] = {};
    const H5Z_filter_t id =
        H5Pget_filter2(dcpl, static_cast<unsigned>(i), &flags, &nvalues, values, sizeof name, name, &config);
    FilterStep step{static_cast<int>(id), std::vector<unsigned>(values, values + std::min<size_t>(nvalues, 16)), name};
    out.push_back({step.id, filter_name(step.id, step.name), step.values, decodes(step.id)});
    steps->push_back(std::move(step));
  }
  return out;
}

}  // namespace

DType numeric_type(hid_t type, bool* big_endian, const std::string& file, const std::string& dataset) {
  const size_t size = H5Tget_size(type);
  *big_endian = false;
  switch (H5Tget_class(type)) {
    case H5T_INTEGER:
      if (size != 1 && size != 2 && size != 4 && size != 8) refuse_type(type, file, dataset, "an integer of that size");
      *big_endian = size > 1 && H5Tget_order(type) == H5T_ORDER_BE;
      return integer(size, H5Tget_sign(type) == H5T_SGN_2);
    case H5T_FLOAT:
      if (!ieee(type, size)) refuse_type(type, file, dataset, "a float that is not IEEE half, single or double");
      *big_endian = H5Tget_order(type) == H5T_ORDER_BE;
      return size == 2 ? DType::float16() : size == 4 ? DType::float32() : DType::float64();
    case H5T_ENUM: {
      if (bool_enum(type)) return DType::bool_();
      const Handle base(H5Tget_super(type));
      return numeric_type(base.get(), big_endian, file, dataset);  // h5py reads an enum as its integers
    }
    case H5T_COMPOUND:
      if (complex_pair(type, size, big_endian)) return size == 8 ? DType::complex64() : DType::complex128();
      refuse_type(type, file, dataset, "a compound type");
    case H5T_STRING: refuse_type(type, file, dataset, "a string type");
    case H5T_VLEN: refuse_type(type, file, dataset, "a variable-length type");
    case H5T_REFERENCE: refuse_type(type, file, dataset, "a reference type");
    case H5T_OPAQUE: refuse_type(type, file, dataset, "an opaque type");
    case H5T_ARRAY: refuse_type(type, file, dataset, "an array type");
    default: refuse_type(type, file, dataset, "a type");
  }
}

Handle memory_type(DType dtype, hid_t file_type) {
  if (dtype == DType::float16() || dtype == DType::bool_()) {
    Handle t(H5Tcopy(file_type));
    if (dtype == DType::float16()) H5Tset_order(t.get(), H5T_ORDER_LE);
    return t;
  }
  if (H5Tget_class(file_type) == H5T_ENUM) {
    const Handle base(H5Tget_super(file_type));
    return Handle(H5Tget_native_type(base.get(), H5T_DIR_ASCEND));
  }
  return Handle(H5Tget_native_type(file_type, H5T_DIR_ASCEND));
}

std::vector<Attribute> attributes(hid_t object) {
  std::vector<Attribute> list;
  hsize_t idx = 0;
  H5Aiterate2(object, H5_INDEX_NAME, H5_ITER_INC, &idx, &collect_attribute, &list);
  H5Eclear2(H5E_DEFAULT);
  return list;
}

Metadata read_metadata(hid_t dataset, const std::string& file, const std::string& path) {
  Metadata m;
  m.file = file;
  m.path = path;
  const Handle type(check(H5Dget_type(dataset), file, "cannot read the type of dataset " + path));
  m.dtype = numeric_type(type.get(), &m.big_endian, file, path);
  const Handle space(check(H5Dget_space(dataset), file, "cannot read the shape of dataset " + path));
  const H5S_class_t space_class = H5Sget_simple_extent_type(space.get());
  if (space_class == H5S_NULL) throw StorageError(file, "dataset " + path + " has no elements (a null dataspace)");
  const int rank = H5Sget_simple_extent_ndims(space.get());
  if (rank < 0 || rank > 32) {
    throw StorageError(file, absl::StrCat("dataset ", path, ": expected at most 32 axes, found ", rank));
  }
  std::vector<hsize_t> dims(static_cast<size_t>(rank));
  H5Sget_simple_extent_dims(space.get(), dims.data(), nullptr);
  for (hsize_t d : dims) m.shape.push_back(static_cast<int64_t>(d));
  const Handle dcpl(check(H5Dget_create_plist(dataset), file, "cannot read the layout of dataset " + path));
  switch (H5Pget_layout(dcpl.get())) {
    case H5D_CHUNKED: {
      m.layout = "chunked";
      std::vector<hsize_t> chunk(static_cast<size_t>(rank));
      check_status(H5Pget_chunk(dcpl.get(), rank, chunk.data()), file, "cannot read the chunks of dataset " + path);
      for (hsize_t c : chunk) {
        if (c == 0) throw StorageError(file, "dataset " + path + ": a chunk dimension is 0");
        m.chunk_shape.push_back(static_cast<int64_t>(c));
      }
      break;
    }
    case H5D_COMPACT: m.layout = "compact"; break;
    case H5D_CONTIGUOUS: m.layout = "contiguous"; break;
    default: m.layout = "virtual"; break;
  }
  std::vector<FilterStep> steps;
  m.filters = filters(dcpl.get(), &steps);
  const Handle memory = memory_type(m.dtype, type.get());
  m.fill_value = fill_value(dcpl.get(), m.dtype, memory.get());
  m.dimension_names = dimension_names(dataset, m.shape.size());
  m.attributes = attributes(dataset);
  if (H5Aexists(dataset, "NAME") > 0) {
    const Handle name(H5Aopen(dataset, "NAME", H5P_DEFAULT));
    m.dimension_without_values = name.valid() && absl::StrContains(attribute_value(name.get()), kDimensionMark);
  }
  H5Eclear2(H5E_DEFAULT);
  return m;
}

namespace {

struct Listing {
  std::vector<std::string> names;
  size_t limit = 0;
};

herr_t list_one(hid_t, const char* name, const H5O_info_t* info, void* out) {
  auto& l = *static_cast<Listing*>(out);
  if (std::strcmp(name, ".") == 0) return 0;
  const char* kind = info->type == H5O_TYPE_GROUP ? "group" : info->type == H5O_TYPE_DATASET ? "dataset" : "type";
  l.names.push_back(absl::StrCat("/", name, " (", kind, ")"));
  return l.names.size() >= l.limit ? 1 : 0;
}

}  // namespace

std::vector<std::string> list_objects(hid_t file, size_t limit) {
  Listing l{{}, limit};
  H5Ovisit2(file, H5_INDEX_NAME, H5_ITER_INC, &list_one, &l, H5O_INFO_BASIC);
  H5Eclear2(H5E_DEFAULT);
  return l.names;
}

}  // namespace tessera::array::hdf5::detail
