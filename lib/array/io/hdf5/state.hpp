// Private: what an open HDF5 dataset holds (hdf5.hpp's Dataset::State), and
// the helpers its reading, writing and describing files share.
#pragma once

#include <hdf5.h>

#include <memory>
#include <string>
#include <vector>

#include "array/io/hdf5/filters.hpp"
#include "array/io/hdf5/library.hpp"
#include "tessera/array/io/hdf5.hpp"

namespace tessera::array::hdf5 {

struct Dataset::State {
  Metadata meta;
  Chunks chunks;
  // Declared file first: the dataset closes before the file.
  detail::Handle file;
  detail::Handle dataset;
  detail::Handle memory_type;                  //!< the dtype in native order, for H5Dread and fill values
  std::unique_ptr<detail::Pipeline> pipeline;  //!< chunked datasets only
  size_t chunk_nbytes = 0;
  uint64_t file_size = 0;
  bool writable = false;
  bool closed = false;
};

namespace detail {

//! NetCDF-4's NAME of a dimension scale that has no values; written followed by the length in 10 columns.
inline constexpr const char* kDimensionMark = "This is a netCDF dimension but not a netCDF variable.";

//! The dataset's dtype, `*big_endian` set from the stored order; StorageError
//! naming the type (its DDL text) when tessera has no dtype for it.
DType numeric_type(hid_t type, bool* big_endian, const std::string& file, const std::string& dataset);
//! A type to read `dtype` into memory with, in native order (`file_type`: the stored one, for enums and float16).
Handle memory_type(DType dtype, hid_t file_type);
//! The object's attributes, printed (NetCDF-4's and dimension scales' bookkeeping left out), at most 100.
std::vector<Attribute> attributes(hid_t object);
//! The dataset's header; `path` (absolute) names it. The lock is held.
Metadata read_metadata(hid_t dataset, const std::string& file, const std::string& path);
//! The absolute path of a dataset as a user gives it ("x", "/g/x", "g//x/").
std::string absolute(const std::string& dataset);
//! Opens `path` read-only once it is known to be a regular file (a FIFO is
//! refused, never waited on); StorageError naming it when libhdf5 cannot parse it.
Handle open_file(const std::string& path);
//! Fills in what follows from `s.meta` (blocks, memory type, pipeline, file size). The lock is held.
void finish_state(Dataset::State& s);
//! Writes block `block` through H5Dwrite (datasets that are not chunked: 0-d ones).
void write_through_library(const Dataset::State& s, const std::vector<int64_t>& block, const NDArray& data);
//! The file's objects ("/g (group)", "/g/x (dataset)"), at most `limit`, for messages.
std::vector<std::string> list_objects(hid_t file, size_t limit);

}  // namespace detail
}  // namespace tessera::array::hdf5
