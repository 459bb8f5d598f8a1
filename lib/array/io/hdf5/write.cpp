// Creating a dataset and writing its chunks: each chunk encoded by the
// caller's task (filters.hpp), its bytes written by H5Dwrite_chunk under the
// lock. A NetCDF-4 target gets dimension scales named after its axes.
#include <cstring>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <absl/strings/str_split.h>
#include <hdf5_hl.h>

#include "array/io/codecs/codec.hpp"
#include "array/io/hdf5/state.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::hdf5 {
namespace {

using detail::check;
using detail::check_status;
using detail::Handle;

constexpr unsigned kZstdFilter = 32015;

// The stored type of `dtype`, little-endian, as h5py writes it (bool an enum,
// complex a compound of r and i, float16 an IEEE half).
Handle file_type(DType dtype) {
  switch (dtype.id()) {
    case DType::Id::Bool: {
      Handle t(H5Tenum_create(H5T_NATIVE_INT8));
      int8_t no = 0, yes = 1;
      H5Tenum_insert(t.get(), "FALSE", &no);
      H5Tenum_insert(t.get(), "TRUE", &yes);
      return t;
    }
    case DType::Id::Int8: return Handle(H5Tcopy(H5T_STD_I8LE));
    case DType::Id::Int16: return Handle(H5Tcopy(H5T_STD_I16LE));
    case DType::Id::Int32: return Handle(H5Tcopy(H5T_STD_I32LE));
    case DType::Id::Int64: return Handle(H5Tcopy(H5T_STD_I64LE));
    case DType::Id::UInt8: return Handle(H5Tcopy(H5T_STD_U8LE));
    case DType::Id::UInt16: return Handle(H5Tcopy(H5T_STD_U16LE));
    case DType::Id::UInt32: return Handle(H5Tcopy(H5T_STD_U32LE));
    case DType::Id::UInt64: return Handle(H5Tcopy(H5T_STD_U64LE));
    case DType::Id::Float16: {
      Handle t(H5Tcopy(H5T_IEEE_F32LE));
      H5Tset_fields(t.get(), 15, 10, 5, 0, 10);
      H5Tset_size(t.get(), 2);
      H5Tset_ebias(t.get(), 15);
      return t;
    }
    case DType::Id::Float32: return Handle(H5Tcopy(H5T_IEEE_F32LE));
    case DType::Id::Float64: return Handle(H5Tcopy(H5T_IEEE_F64LE));
    case DType::Id::Complex64:
    case DType::Id::Complex128: {
      const bool single = dtype == DType::complex64();
      const size_t half = single ? 4 : 8;
      Handle t(H5Tcreate(H5T_COMPOUND, 2 * half));
      H5Tinsert(t.get(), "r", 0, single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
      H5Tinsert(t.get(), "i", half, single ? H5T_IEEE_F32LE : H5T_IEEE_F64LE);
      return t;
    }
  }
  return Handle(H5Tcopy(H5T_IEEE_F64LE));
}

// The filters `format` asks for, set on `dcpl`.
void set_filters(hid_t dcpl, const Format& format, const std::string& path) {
  if (format.shuffle) check_status(H5Pset_shuffle(dcpl), path, "cannot set the shuffle filter");
  const std::vector<std::string> parts = absl::StrSplit(format.codec, ':');
  if (format.codec == "none") return;
  if (parts.size() <= 2 && (parts[0] == "gzip" || parts[0] == "zlib" || parts[0] == "zstd")) {
    const bool zstd = parts[0] == "zstd";
    const auto level = static_cast<unsigned>(codec::spec_int(std::vector<std::string>(parts.begin() + 1, parts.end()),
                                                             0, zstd ? 3 : 4, 0, zstd ? 22 : 9, parts[0].c_str()));
    if (zstd) {
      // Optional: libhdf5 lets a dataset name a filter it has no plugin for only so.
      check_status(H5Pset_filter(dcpl, kZstdFilter, H5Z_FLAG_OPTIONAL, 1, &level), path, "cannot set the zstd filter");
    } else {
      check_status(H5Pset_deflate(dcpl, level), path, "cannot set the deflate filter");
    }
    return;
  }
  throw ValueError(absl::StrCat("HDF5 codec: expected none, gzip[:LEVEL] or zstd[:LEVEL], found '", format.codec, "'"));
}

std::string parent_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  return slash == 0 ? "" : path.substr(0, slash);
}

// NetCDF-4's dimensions: a dimension scale per axis, beside the dataset. An axis
// named as the 1-d dataset itself makes the dataset its own scale (a coordinate variable).
void attach_scales(const Dataset::State& s, const Format& format) {
  const std::string& path = s.meta.path;
  const std::string base = path.substr(path.rfind('/') + 1);
  for (size_t a = 0; a < s.meta.shape.size(); ++a) {
    const std::string name = a < format.dimension_names.size() && !format.dimension_names[a].empty()
                                 ? format.dimension_names[a]
                                 : absl::StrCat("dim_", a);
    if (name.find('/') != std::string::npos) {
      throw ValueError(absl::StrCat("dimension name: expected no '/', found '", name, "'"));
    }
    if (name == base) {
      if (s.meta.shape.size() != 1) {
        throw ValueError(absl::StrCat("dimension name '", name, "': only a 1-d dataset may share its name"));
      }
      check_status(H5DSset_scale(s.dataset.get(), name.c_str()), s.meta.file, "cannot make " + path + " a scale");
      continue;
    }
    const std::string scale_path = absl::StrCat(parent_of(path), "/", name);
    Handle scale;
    if (H5Lexists(s.file.get(), scale_path.c_str(), H5P_DEFAULT) > 0) {
      scale = Handle(
          check(H5Dopen2(s.file.get(), scale_path.c_str(), H5P_DEFAULT), s.meta.file, "cannot open " + scale_path));
    } else {
      const hsize_t n = static_cast<hsize_t>(s.meta.shape[a]);
      const Handle space(H5Screate_simple(1, &n, nullptr));
      scale = Handle(check(H5Dcreate2(s.file.get(), scale_path.c_str(), H5T_IEEE_F32LE, space.get(), H5P_DEFAULT,
                                      H5P_DEFAULT, H5P_DEFAULT),
                           s.meta.file, "cannot create the dimension " + scale_path));
      // NetCDF-4's mark of a dimension that has no values of its own.
      const std::string mark = absl::StrFormat("%s%10d", detail::kDimensionMark, static_cast<int>(n));
      check_status(H5DSset_scale(scale.get(), mark.c_str()), s.meta.file, "cannot make " + scale_path + " a scale");
    }
    check_status(H5DSattach_scale(s.dataset.get(), scale.get(), static_cast<unsigned>(a)), s.meta.file,
                 "cannot attach the dimension " + scale_path + " to " + path);
  }
}

void check_chunk_shape(const Shape& shape, const Shape& chunk_shape, DType dtype) {
  if (chunk_shape.size() != shape.size()) {
    throw ValueError(absl::StrCat("HDF5 chunks: expected ", shape.size(), " axes, found ", shape_str(chunk_shape)));
  }
  uint64_t bytes = dtype.itemsize();
  for (int64_t c : chunk_shape) {
    if (c < 1) throw ValueError("HDF5 chunks: expected sizes of at least 1, found " + shape_str(chunk_shape));
    bytes = c > int64_t{1} << 32 ? ~uint64_t{0} : bytes * static_cast<uint64_t>(c);
    if (bytes >= uint64_t{1} << 32) {
      throw ValueError(absl::StrCat("HDF5 chunks: expected chunks under 4 GiB (libhdf5's limit), found ",
                                    shape_str(chunk_shape), " of ", dtype.name()));
    }
  }
}

}  // namespace

Dataset create(const std::string& path, const std::string& dataset, DType dtype, const Shape& shape,
               const Shape& chunk_shape, const Format& format) {
  Shape chunk = chunk_shape;
  for (size_t a = 0; a < chunk.size() && a < shape.size(); ++a) {
    chunk[a] = std::min(chunk[a], std::max<int64_t>(shape[a], 1));  // libhdf5 refuses chunks past the shape
  }
  if (!shape.empty()) check_chunk_shape(shape, chunk, dtype);
  auto s = std::make_shared<Dataset::State>();
  const std::string name = detail::absolute(dataset);
  auto held = detail::lock();
  const Handle fcpl(H5Pcreate(H5P_FILE_CREATE));
  if (format.netcdf) {
    // NetCDF-4 keeps its groups' and attributes' creation order.
    H5Pset_link_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
    H5Pset_attr_creation_order(fcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  }
  s->file =
      Handle(check(H5Fcreate(path.c_str(), H5F_ACC_EXCL, fcpl.get(), H5P_DEFAULT), path, "cannot create the file"));
  const Handle lcpl(H5Pcreate(H5P_LINK_CREATE));
  H5Pset_create_intermediate_group(lcpl.get(), 1);
  std::vector<hsize_t> dims(shape.begin(), shape.end());
  const Handle space(shape.empty() ? H5Screate(H5S_SCALAR)
                                   : H5Screate_simple(static_cast<int>(dims.size()), dims.data(), nullptr));
  const Handle dcpl(H5Pcreate(H5P_DATASET_CREATE));
  if (format.netcdf) H5Pset_attr_creation_order(dcpl.get(), H5P_CRT_ORDER_TRACKED | H5P_CRT_ORDER_INDEXED);
  const Handle type = file_type(dtype);
  if (!shape.empty()) {
    std::vector<hsize_t> c(chunk.begin(), chunk.end());
    check_status(H5Pset_chunk(dcpl.get(), static_cast<int>(c.size()), c.data()), path, "cannot set the chunks");
    set_filters(dcpl.get(), format, path);
  }
  std::vector<std::byte> zero(dtype.itemsize());
  H5Pset_fill_value(dcpl.get(), type.get(), zero.data());
  s->dataset = Handle(
      check(H5Dcreate2(s->file.get(), name.c_str(), type.get(), space.get(), lcpl.get(), dcpl.get(), H5P_DEFAULT), path,
            "cannot create dataset " + name));
  s->writable = true;
  s->meta = detail::read_metadata(s->dataset.get(), path, name);
  detail::finish_state(*s);
  if (format.netcdf || !format.dimension_names.empty()) attach_scales(*s, format);
  return Dataset(std::move(s));
}

void Dataset::write_chunk(const std::vector<int64_t>& block, const NDArray& data) const {
  const State& s = *s_;
  const Shape shape = s.chunks.block_shape(block);
  if (!s.writable) throw StorageError(s.meta.file, "dataset " + s.meta.path + " was opened read-only");
  if (data.shape() != shape || data.dtype() != s.meta.dtype) {
    throw Error(absl::StrCat("hdf5 write_chunk: expected a ", s.meta.dtype.name(), " block of shape ", shape_str(shape),
                             ", found ", data.describe()));
  }
  if (s.pipeline == nullptr) return detail::write_through_library(s, block, data);
  NDArray whole = data;
  if (shape != s.meta.chunk_shape || !data.is_c_contiguous()) {
    // HDF5 stores edge chunks whole: the part past the dataset's edge is zeros.
    whole = NDArray(Buffer::allocate(s.chunk_nbytes, /*zero=*/shape != s.meta.chunk_shape), s.meta.dtype,
                    s.meta.chunk_shape, NDArray::c_strides(s.meta.chunk_shape, s.meta.dtype.itemsize()), 0);
    std::vector<Slice> region;
    for (int64_t extent : shape) region.emplace_back(0, extent);
    whole.slice(region).assign(data);
  }
  std::span<const std::byte> encoded;
  try {
    encoded = s.pipeline->encode({whole.data(), whole.nbytes()});
  } catch (const codec::CodecError& e) {
    throw StorageError(s.meta.file, absl::StrCat("dataset ", s.meta.path, ": ", e.what()));
  }
  std::vector<hsize_t> offset;
  for (size_t a = 0; a < block.size(); ++a) offset.push_back(static_cast<hsize_t>(block[a] * s.meta.chunk_shape[a]));
  auto held = detail::lock();
  if (s.closed) throw StorageError(s.meta.file, "the dataset " + s.meta.path + " was closed");
  check_status(H5Dwrite_chunk(s.dataset.get(), H5P_DEFAULT, 0, offset.data(), encoded.size(), encoded.data()),
               s.meta.file, "cannot write a chunk of dataset " + s.meta.path);
}

}  // namespace tessera::array::hdf5
