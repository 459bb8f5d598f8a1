// Opening a dataset and reading its blocks: a chunk's stored bytes under the
// lock, its filters decoded outside it; H5Dread under the lock for what
// tessera does not decode and for datasets that are not chunked.
#include <fcntl.h>
#include <unistd.h>

#include <cstring>
#include <filesystem>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/io/codecs/codec.hpp"
#include "array/io/hdf5/state.hpp"
#include "array/io/zarr_json.hpp"
#include "storage/regular_file.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::hdf5 {
namespace {

using detail::check;
using detail::check_status;
using detail::Handle;

// The blocks of an unchunked dataset: about kBlockBytes of whole rows of the first axis.
Chunks unchunked_blocks(const Metadata& m) {
  if (m.shape.empty()) return Chunks(std::vector<std::vector<int64_t>>{});
  int64_t row = static_cast<int64_t>(m.dtype.itemsize());  // saturates at kBlockBytes: one row a block
  for (size_t a = 1; a < m.shape.size(); ++a) {
    row = std::min(row * std::max<int64_t>(m.shape[a], 1), Dataset::kBlockBytes);
  }
  std::vector<AxisChunks> spec(m.shape.size(), AxisChunks(-1));
  spec[0] = AxisChunks(std::max<int64_t>(1, Dataset::kBlockBytes / std::max<int64_t>(row, 1)));
  return normalize_chunks(ChunkSpec(spec), m.shape);
}

Chunks chunk_grid(const Metadata& m) {
  if (m.chunk_shape.empty()) return unchunked_blocks(m);
  std::vector<std::vector<int64_t>> sizes;
  for (size_t a = 0; a < m.shape.size(); ++a) sizes.push_back(normalize_chunks({m.chunk_shape[a]}, {m.shape[a]})[0]);
  return Chunks(std::move(sizes));
}

// "No dataset /x in FILE; it holds: /a (group), /a/b (dataset)".
[[noreturn]] void no_dataset(hid_t file, const std::string& path, const std::string& name, const char* what) {
  std::vector<std::string> names = detail::list_objects(file, 21);
  if (names.size() > 20) names.back() = "...";
  throw StorageError(path, absl::StrCat("no ", what, " ", name, " in the file; it holds: ",
                                        names.empty() ? "nothing" : absl::StrJoin(names, ", ")));
}

std::vector<hsize_t> chunk_offset(const Dataset::State& s, const std::vector<int64_t>& block) {
  std::vector<hsize_t> offset;
  for (size_t a = 0; a < block.size(); ++a) offset.push_back(static_cast<hsize_t>(block[a] * s.meta.chunk_shape[a]));
  return offset;
}

std::string chunk_name(const Dataset::State& s, const std::vector<int64_t>& block) {
  return absl::StrCat("chunk (", absl::StrJoin(block, ", "), ") of dataset ", s.meta.path);
}

NDArray fill_block(const Dataset::State& s, const Shape& shape) {
  return NDArray::full(s.meta.dtype, shape, s.meta.fill_value.value_or(Scalar(0)));
}

// The block's region of the dataset (file_space) and of memory, for H5Dread and H5Dwrite.
struct Selection {
  Handle file_space, memory_space;
};

Selection select(const Dataset::State& s, const std::vector<int64_t>& block, const Shape& shape) {
  Selection sel{Handle(H5Dget_space(s.dataset.get())), Handle()};
  if (shape.empty()) {
    sel.memory_space = Handle(H5Screate(H5S_SCALAR));
    return sel;
  }
  std::vector<hsize_t> start, count;
  for (size_t a = 0; a < shape.size(); ++a) {
    start.push_back(static_cast<hsize_t>(s.chunks.offsets(a)[static_cast<size_t>(block[a])]));
    count.push_back(static_cast<hsize_t>(shape[a]));
  }
  H5Sselect_hyperslab(sel.file_space.get(), H5S_SELECT_SET, start.data(), nullptr, count.data(), nullptr);
  sel.memory_space = Handle(H5Screate_simple(static_cast<int>(count.size()), count.data(), nullptr));
  return sel;
}

void require_open(const Dataset::State& s) {
  if (s.closed) throw StorageError(s.meta.file, "the dataset " + s.meta.path + " was closed");
}

// Reads the region of `block` through libhdf5 (which applies the filters), under the lock.
NDArray read_through_library(const Dataset::State& s, const std::vector<int64_t>& block) {
  const Shape shape = s.chunks.block_shape(block);
  NDArray out = NDArray::empty(s.meta.dtype, shape);
  if (out.nbytes() == 0) return out;
  auto held = detail::lock();
  require_open(s);
  const Selection sel = select(s, block, shape);
  check_status(H5Dread(s.dataset.get(), s.memory_type.get(), sel.memory_space.get(), sel.file_space.get(), H5P_DEFAULT,
                       out.data()),
               s.meta.file, "cannot read " + chunk_name(s, block));
  return out;
}

// The chunk's stored bytes (under the lock), or nothing when it was never written.
// They are read into the calling thread's buffer, kept from chunk to chunk (a
// fresh one per chunk fragments the heap: filters.cpp's encode), valid until
// the thread's next call.
std::optional<std::span<const std::byte>> stored_chunk(const Dataset::State& s, const std::vector<int64_t>& block,
                                                       unsigned* mask) {
  const std::vector<hsize_t> offset = chunk_offset(s, block);
  auto held = detail::lock();
  require_open(s);
  haddr_t address = HADDR_UNDEF;
  hsize_t size = 0;
  check_status(H5Dget_chunk_info_by_coord(s.dataset.get(), offset.data(), mask, &address, &size), s.meta.file,
               "cannot find " + chunk_name(s, block));
  if (address == HADDR_UNDEF) return std::nullopt;
  // Checked before the memory is taken: a crafted header may declare any size.
  if (size > s.file_size || address > s.file_size - size) {
    throw StorageError(s.meta.file, absl::StrCat(chunk_name(s, block), ": its ", size, " bytes at offset ", address,
                                                 " end past the file's ", s.file_size, " bytes"));
  }
  if (size > s.pipeline->max_stored_size()) {
    throw StorageError(s.meta.file,
                       absl::StrCat(chunk_name(s, block), ": expected at most ", s.pipeline->max_stored_size(),
                                    " bytes (the most its filters make of ", "one chunk), found ", size));
  }
  thread_local std::vector<std::byte> bytes;
  bytes.resize(size);
  uint32_t read_mask = 0;
  check_status(H5Dread_chunk(s.dataset.get(), H5P_DEFAULT, offset.data(), &read_mask, bytes.data()), s.meta.file,
               "cannot read " + chunk_name(s, block));
  *mask = read_mask;
  return std::span<const std::byte>(bytes);
}

}  // namespace

namespace detail {

Handle open_file(const std::string& path) {
  (void)storage::open_regular(path, O_RDONLY, /*missing_ok=*/false);
  auto held = detail::lock();
  if (H5Fis_hdf5(path.c_str()) <= 0) {
    const std::string why = detail::last_error();
    throw StorageError(path, absl::StrCat("cannot open as an HDF5 file",
                                          why.empty() ? std::string() : absl::StrCat(": libhdf5 says \"", why, "\"")));
  }
  return Handle(check(H5Fopen(path.c_str(), H5F_ACC_RDONLY, H5P_DEFAULT), path, "cannot open as an HDF5 file"));
}

void finish_state(Dataset::State& s) {
  // zarr's bounds: a crafted header cannot ask for a graph of more chunks than memory holds.
  if (!s.meta.chunk_shape.empty()) {
    zarr::detail::check_sizes(s.meta.shape, s.meta.chunk_shape, s.meta.dtype, s.meta.file, "dataset " + s.meta.path);
  }
  s.chunks = chunk_grid(s.meta);
  const Handle type(H5Dget_type(s.dataset.get()));
  s.memory_type = memory_type(s.meta.dtype, type.get());
  hsize_t file_size = 0;
  H5Fget_filesize(s.file.get(), &file_size);
  s.file_size = file_size;
  if (s.meta.chunk_shape.empty()) return;
  s.chunk_nbytes = s.meta.dtype.itemsize();
  for (int64_t c : s.meta.chunk_shape) s.chunk_nbytes *= static_cast<size_t>(c);
  std::vector<FilterStep> steps;
  for (const Filter& f : s.meta.filters) steps.push_back({f.id, f.values, f.name});
  s.pipeline = std::make_unique<Pipeline>(std::move(steps), s.chunk_nbytes, s.meta.dtype.itemsize());
}

void write_through_library(const Dataset::State& s, const std::vector<int64_t>& block, const NDArray& data) {
  const NDArray bytes = data.is_c_contiguous() ? data : data.copy();
  auto held = lock();
  require_open(s);
  const Selection sel = select(s, block, data.shape());
  check_status(H5Dwrite(s.dataset.get(), s.memory_type.get(), sel.memory_space.get(), sel.file_space.get(), H5P_DEFAULT,
                        bytes.data()),
               s.meta.file, "cannot write dataset " + s.meta.path);
}

}  // namespace detail

const Metadata& Dataset::metadata() const { return s_->meta; }
const Chunks& Dataset::chunks() const { return s_->chunks; }
bool Dataset::parallel() const { return s_->pipeline != nullptr && s_->pipeline->decodable(); }

NDArray Dataset::read_chunk(const std::vector<int64_t>& block) const {
  const State& s = *s_;
  const Shape shape = s.chunks.block_shape(block);  // checks the index
  if (!parallel()) return read_through_library(s, block);
  unsigned mask = 0;
  const std::optional<std::span<const std::byte>> bytes = stored_chunk(s, block, &mask);
  if (!bytes) return fill_block(s, shape);
  Buffer chunk = Buffer::allocate(s.chunk_nbytes);
  try {
    s.pipeline->decode(*bytes, mask, {chunk.data(), chunk.size()});
  } catch (const codec::CodecError& e) {
    throw StorageError(s.meta.file, absl::StrCat(chunk_name(s, block), ": ", e.what()));
  }
  if (s.meta.big_endian) byteswap(chunk.data(), s.chunk_nbytes / s.meta.dtype.itemsize(), s.meta.dtype);
  NDArray full(std::move(chunk), s.meta.dtype, s.meta.chunk_shape,
               NDArray::c_strides(s.meta.chunk_shape, s.meta.dtype.itemsize()), 0);
  if (shape == s.meta.chunk_shape) return full;
  std::vector<Slice> trim;
  for (int64_t extent : shape) trim.emplace_back(0, extent);
  return full.slice(trim);
}

void Dataset::close() const {
  auto held = detail::lock();
  if (s_->closed) return;
  s_->closed = true;
  if (s_->writable) H5Fflush(s_->file.get(), H5F_SCOPE_LOCAL);
  s_->memory_type = Handle();
  s_->dataset = Handle();
  if (s_->file.valid()) check_status(H5Fclose(s_->file.release()), s_->meta.file, "cannot close the file");
}

Dataset open(const std::string& path, const std::string& dataset) {
  auto s = std::make_shared<Dataset::State>();
  s->file = detail::open_file(path);
  auto held = detail::lock();
  const std::string name = detail::absolute(dataset);
  if (H5Lexists(s->file.get(), name.c_str(), H5P_DEFAULT) <= 0 && name != "/") {
    H5Eclear2(H5E_DEFAULT);
    no_dataset(s->file.get(), path, name, "dataset");
  }
  H5O_info_t info{};
  check_status(H5Oget_info_by_name2(s->file.get(), name.c_str(), &info, H5O_INFO_BASIC, H5P_DEFAULT), path,
               "cannot open " + name);
  if (info.type != H5O_TYPE_DATASET) no_dataset(s->file.get(), path, name + " (it is a group)", "dataset");
  s->dataset = Handle(check(H5Dopen2(s->file.get(), name.c_str(), H5P_DEFAULT), path, "cannot open dataset " + name));
  s->meta = detail::read_metadata(s->dataset.get(), path, name);
  detail::finish_state(*s);
  if (s->pipeline != nullptr) {
    // A filter neither tessera nor libhdf5 decodes: said now, not at the first read.
    for (const Filter& f : s->meta.filters) {
      if (!f.decoded_by_tessera && H5Zfilter_avail(static_cast<H5Z_filter_t>(f.id)) <= 0) {
        H5Eclear2(H5E_DEFAULT);
        throw StorageError(path, absl::StrCat("dataset ", name, " uses the ", f.name,
                                              " filter, which neither tessera nor libhdf5 (no plugin for it) decodes"));
      }
    }
  }
  return Dataset(std::move(s));
}

bool is_hdf5(const std::string& path) {
  std::error_code ec;
  if (!std::filesystem::is_regular_file(path, ec)) return false;  // a FIFO is never opened
  auto held = detail::lock();
  const htri_t ok = H5Fis_hdf5(path.c_str());
  H5Eclear2(H5E_DEFAULT);
  return ok > 0;
}

}  // namespace tessera::array::hdf5
