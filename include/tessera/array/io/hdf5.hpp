// tessera/array/io/hdf5.hpp — HDF5 and NetCDF-4 files: datasets read and
// written chunk by chunk, the filters decoded and encoded in parallel.
//
// Most out-of-core arrays already live in HDF5 files, or in NetCDF-4 files,
// which are HDF5 underneath. libhdf5 (Debian's serial build) is not
// thread-safe, so every call into it holds one process-wide lock; tessera keeps
// that lock to the cheap part: a chunk's stored bytes are read with the direct
// chunk API (H5Dread_chunk) and its filters (deflate, shuffle, fletcher32,
// lzf, blosc, zstd) are decoded by the block's own task, outside the lock, so
// decompression runs on every worker. A dataset with another filter (szip,
// scaleoffset, nbit, a plugin's) is read through H5Dread under the lock:
// correct, one chunk at a time (`Dataset::parallel()` says which).
//
// Every numeric dtype tessera has is read, in either byte order (h5py's bool
// enum and complex compound included); an unallocated chunk reads as the
// dataset's fill value. Strings, compounds, variable-length and reference
// types are refused with an error naming the type. A file is hostile until
// checked: a stored chunk larger than the file, or than the most its filters
// make of one chunk, is refused before memory is taken for it.
//
// Writing (`create`, `Dataset::write_chunk`) makes a chunked dataset, deflate
// or none, optionally shuffled, each chunk encoded in the caller's task and
// written with H5Dwrite_chunk under the lock. `store(x, "out.h5:/group/x")`
// (tessera/array/ops/store.hpp) writes a whole Array so, into a temporary file
// published by an atomic rename; a ".nc" target gets NetCDF-4 dimension scales,
// so netCDF4-python and xarray read the axes' names.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array t = ta::from_hdf5("run.h5", "/fields/temperature");     // one block per chunk
//   double mean = ta::mean(t).compute<double>();
//   ta::Array v = ta::from_netcdf("ocean.nc", "thetao");
//   auto d = ta::hdf5::open("ocean.nc", "/thetao");
//   d.metadata().dimension_names;     // {"time", "depth", "lat", "lon"}
// @endcode
//
// Thread-safety: every function may be called from any thread; a Dataset's
// const members may be called from many threads at once (they take the lock).
// Without libhdf5 (-Dhdf5=disabled), each function throws Error saying so.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"

namespace tessera::array {
namespace hdf5 {

//! One filter of a dataset's pipeline.
struct Filter {
  int id = 0;                       //!< HDF5's filter id: 1 deflate, 2 shuffle, 3 fletcher32, 32000 lzf, ...
  std::string name;                 //!< "deflate", "shuffle", "szip", "filter 32017", ...
  std::vector<unsigned> values;     //!< its parameters (deflate's level, shuffle's element size...)
  bool decoded_by_tessera = false;  //!< false: libhdf5 decodes it, under the lock
};

//! An attribute, its value printed ("3.5", "\"degC\"", "[1, 2, 3]", "(compound)").
struct Attribute {
  std::string name;   //!< the attribute's name ("units", "_FillValue", ...)
  std::string value;  //!< its value as printed text
};

//! What a dataset's header says.
struct Metadata {
  std::string file;                  //!< the file's path
  std::string path;                  //!< the dataset's absolute path in the file ("/group/x")
  Shape shape;                       //!< elements along each axis
  Shape chunk_shape;                 //!< the chunk shape; empty when not chunked
  std::string layout;                //!< "chunked", "contiguous" or "compact"
  DType dtype;                       //!< the element type, in native byte order
  bool big_endian = false;           //!< the stored byte order
  std::optional<Scalar> fill_value;  //!< what unallocated chunks read as (none defined: zeros)
  std::vector<Filter> filters;       //!< in write order
  //! Per axis, the name of the dimension scale attached (NetCDF-4's dimensions); "" for none.
  std::vector<std::string> dimension_names;
  std::vector<Attribute> attributes;  //!< the dataset's attributes, in name order
  //! NetCDF-4's bookkeeping: a dimension's scale that holds no values of its own.
  bool dimension_without_values = false;
};

//! An open dataset of an HDF5 file (from `open` or `create`): its metadata, its
//! blocks, and chunk reads and writes. Copies share the open file; every libhdf5 call
//! goes through tessera's one HDF5 lock, filters are decoded and encoded outside it.
//! Thread-safe: tasks on several workers read (or write) chunks of one Dataset.
//!
//! @code
//!   auto d = tessera::array::hdf5::open("run.h5", "/fields/t");
//!   tessera::array::NDArray first = d.read_chunk({0, 0});
//! @endcode
class Dataset {
 public:
  //! Contiguous and compact datasets are read in blocks of about this many bytes.
  static constexpr int64_t kBlockBytes = int64_t{64} << 20;

  Dataset() = default;
  //! What the dataset's header says (shape, dtype, chunks, filters, attributes).
  const Metadata& metadata() const;
  //! The blocks reads use: the chunks (the last block along an axis trimmed to
  //! the shape), or blocks of about kBlockBytes along the first axis when the
  //! dataset is not chunked.
  const Chunks& chunks() const;
  //! True when tessera decodes every filter itself (reads run in parallel);
  //! false when libhdf5 decodes them under its lock (H5Dread).
  bool parallel() const;
  //! Block `block` of chunks(): decoded, or the fill value when its chunk was
  //! never written. StorageError naming the file, the dataset and the chunk when
  //! its bytes do not decode; ChunkError for an index out of range.
  NDArray read_chunk(const std::vector<int64_t>& block) const;
  //! Encodes `data` (a block of chunks(), the dataset's dtype) with the
  //! dataset's filters and writes it as the chunk. Datasets opened by `create` only.
  void write_chunk(const std::vector<int64_t>& block, const NDArray& data) const;
  //! Closes the file (flushing what was written); later calls throw. Also done
  //! when the last copy of the Dataset goes.
  void close() const;

  struct State;
  //! The dataset over an open file's state (open and create make it).
  explicit Dataset(std::shared_ptr<State> state) : s_(std::move(state)) {}

 private:
  std::shared_ptr<State> s_;
};

//! Opens dataset `dataset` ("/group/x" or "group/x") of the HDF5 file `path`
//! for reading. StorageError naming the file when it is missing or libhdf5
//! cannot parse it, when there is no such dataset (naming those there are),
//! or its type is not numeric (naming it).
Dataset open(const std::string& path, const std::string& dataset);

//! How `create` writes chunks.
struct Format {
  //! "none", "gzip[:LEVEL]" (HDF5's deflate filter; LEVEL 0-9, default 4) or "zstd[:LEVEL]"
  //! (the registered zstd filter 32015: h5py reads it with hdf5plugin).
  std::string codec = "none";
  //! HDF5's byte shuffle before the compressor.
  bool shuffle = false;
  //! Give the dataset NetCDF-4 dimension scales named so (one per axis; empty
  //! with `netcdf`: dim_0, dim_1, ...), so netCDF4-python and xarray name its axes.
  std::vector<std::string> dimension_names = {};
  //! Write what NetCDF-4 needs (dimension scales, creation order): set by
  //! store for a ".nc" file.
  bool netcdf = false;
};

//! Creates the HDF5 file `path` (it must not exist) holding one chunked
//! dataset `dataset` (groups made on the way) of `dtype`, `shape` and
//! `chunk_shape`, filled with zeros where nothing is written. ValueError for a
//! bad chunk shape (HDF5 needs each chunk under 4 GiB) or codec.
Dataset create(const std::string& path, const std::string& dataset, DType dtype, const Shape& shape,
               const Shape& chunk_shape, const Format& format = {});

//! One object of a file, for `tessera info`.
struct Node {
  std::string path;  //!< "/", "/group", "/group/x"
  bool is_group = false;              //!< a group, not a dataset
  std::vector<Attribute> attributes;  //!< a group's (a dataset's are in its Metadata)
  std::optional<Metadata> dataset;    //!< a dataset's header; null for a group or a dataset of another type
  std::string error;                  //!< why a dataset has no Metadata ("string dtype ...")
};

//! The file's groups and datasets, the root first, then depth-first in name
//! order; refuses (StorageError) past 100,000 objects.
std::vector<Node> walk(const std::string& path);

//! True when the file at `path` starts with HDF5's signature (or has it at
//! 512, 1024, ... bytes, after a user block).
bool is_hdf5(const std::string& path);

//! Splits "FILE.h5:/group/x" into the file and the dataset when FILE ends in
//! .h5, .hdf5, .he5, .nc or .nc4 (a dataset path is needed: "/x" at least).
std::optional<std::pair<std::string, std::string>> split_target(const std::string& path);
//! The file an output or input path names: FILE for "FILE.h5:/x", else `path` itself.
std::string file_of(const std::string& path);

}  // namespace hdf5

//! The dataset `dataset` of the HDF5 file `path`, one block per chunk (blocks
//! of about 64 MiB along the first axis for an unchunked dataset). Reads the
//! header now; each block's task reads its chunk's bytes under libhdf5's lock
//! and decodes them outside it. Errors as hdf5::open.
//! @code
//!   auto x = tessera::array::from_hdf5("data.h5", "/images");
//! @endcode
Array from_hdf5(const std::string& path, const std::string& dataset);
//! The same cut into blocks `chunks` (see normalize_chunks): each block's
//! task reads the chunks it overlaps.
Array from_hdf5(const std::string& path, const std::string& dataset, const ChunkSpec& chunks);
//! The variable `variable` ("tas", or "group/tas") of the NetCDF-4 file
//! `path`, as from_hdf5. Its dimension names, `_FillValue`, `scale_factor` and
//! `add_offset` are in hdf5::open(path, variable).metadata(); like
//! netCDF4-python with set_auto_maskandscale(False), values are as stored.
//! StorageError for a dimension without values (NetCDF's own bookkeeping).
Array from_netcdf(const std::string& path, const std::string& variable);

}  // namespace tessera::array
