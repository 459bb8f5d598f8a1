// zarr stores: opening (v2, v3, arrays inside groups or found through
// consolidated metadata), creating, and reading and writing one chunk.
#include "tessera/array/io/zarr.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <optional>
#include <filesystem>
#include <functional>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "storage/regular_file.hpp"
#include "storage/unique_fd.hpp"
#include "array/io/zarr_json.hpp"
#include "storage/publish.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::zarr {

using storage::UniqueFd;
namespace {

namespace fs = std::filesystem;
using detail::json;

bool path_exists(const fs::path& p) {
  std::error_code ec;
  return fs::exists(p, ec);
}

// Renames the written temporary `tmp` into place as `path` (removing it when that fails).
void rename_into_place(const std::string& tmp, const std::string& path) {
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    throw StorageError(path, "cannot rename the temporary file into place", err);
  }
}

// Chunk files are written under the one name every tessera temporary has
// (storage::temporary_path, so a killed run's is recognised and cleaned by
// storage::clean_stale) and renamed into place: readers see the old chunk or
// the new one, never half of it. The store as a whole is synced and published
// by its writer (store(): storage::publish), not chunk by chunk.

// A chunk of `size` bytes that `fill` writes into a mapping of its file.
void write_mapped(const std::string& path, const std::function<void(std::byte*)>& fill, size_t size) {
  const std::string tmp = storage::temporary_path(path);
  try {
    auto file = MappedFile::create(tmp, size);
    fill(file->data());
  } catch (...) {
    ::unlink(tmp.c_str());  // a killed run's temporary is clean_stale's; this one is ours
    throw;
  }
  rename_into_place(tmp, path);
}

// An encoded chunk: a few write calls, no mapping.
void write_bytes(const std::string& path, codec::Bytes bytes) {
  const std::string tmp = storage::temporary_path(path);
  {
    const UniqueFd file(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644));
    if (file.fd < 0) throw StorageError(tmp, "cannot create the chunk's temporary file", errno);
    for (size_t done = 0; done < bytes.size();) {
      const ssize_t n = ::write(file.fd, bytes.data() + done, bytes.size() - done);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw StorageError(tmp, "cannot write the chunk", err);
      }
      done += static_cast<size_t>(n);
    }
    // Starts writing the chunk to the disk now, without waiting: the sync that
    // publishes the store then finds little left to write.
    (void)::sync_file_range(file.fd, 0, 0, SYNC_FILE_RANGE_WRITE);
  }
  rename_into_place(tmp, path);
}

// A chunk file read with pread; its size is the one open_regular saw (a
// file that shrinks after is "shorter", one that grows is read that far).
class FileSource final : public detail::ChunkSource {
 public:
  explicit FileSource(storage::RegularFile file) : file_(std::move(file)) {}
  size_t size() const override { return static_cast<size_t>(file_.size); }
  void read(size_t offset, codec::MutableBytes out) const override {
    size_t done = 0;
    while (done < out.size()) {
      const ssize_t n = ::pread(file_.file.fd, out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) {
        throw codec::CodecError(
            absl::StrCat("cannot read ", out.size(), " bytes at offset ", offset,
                         n < 0 ? absl::StrCat(": ", std::strerror(errno)) : ": the file is shorter"));
      }
      done += static_cast<size_t>(n);
    }
  }

 private:
  storage::RegularFile file_;
};

StorageError wrong_raw_size(const std::string& file_path, const Metadata& meta, size_t expected, size_t found) {
  return StorageError(file_path, absl::StrCat("expected an uncompressed chunk of ", expected, " bytes (",
                                              meta.dtype.name(), " ", shape_str(meta.chunk_shape), "), found ", found,
                                              " bytes"));
}

// The array's metadata from a consolidated `.zmetadata` of an enclosing group.
std::optional<Metadata> consolidated(const fs::path& array) {
  fs::path root = array.parent_path();
  std::string rel = array.filename().string();
  for (int depth = 0; depth < 64 && !root.empty(); ++depth) {
    const fs::path meta = root / ".zmetadata";
    if (path_exists(meta)) {
      const std::string text = detail::read_text(meta.string());
      const json all = detail::parse_document(text, meta.string());
      const std::string key = rel + "/.zarray";
      if (all.is_object() && all.contains("metadata") && all["metadata"].is_object() && all["metadata"].contains(key)) {
        return parse_metadata(all["metadata"][key].dump(), absl::StrCat(meta.string(), " (", key, ")"));
      }
    }
    if (root == root.parent_path()) break;
    rel = (root.filename() / rel).string();
    root = root.parent_path();
  }
  return std::nullopt;
}

[[noreturn]] void not_an_array(const std::string& path) {
  if (is_group(path)) {
    std::vector<std::string> members;
    for (const Node& n : walk(path)) {
      if (!n.path.empty()) members.push_back(n.is_group ? n.path + "/" : n.path);
      if (members.size() == 20) {
        members.push_back("...");
        break;
      }
    }
    throw StorageError(path, absl::StrCat("is a zarr group, not an array; expected a path to one of its arrays: ",
                                          members.empty() ? "(none)" : absl::StrJoin(members, ", ")));
  }
  throw StorageError(path, "no zarr array here: expected .zarray (zarr v2) or zarr.json (zarr v3)");
}

}  // namespace

Store::Store(std::string path, Metadata metadata, Access access)
    : path_(std::move(path)), meta_(std::move(metadata)), access_(access) {
  std::vector<std::vector<int64_t>> sizes;
  for (size_t a = 0; a < meta_.shape.size(); ++a) {
    sizes.push_back(normalize_chunks(meta_.chunk_shape[a], {meta_.shape[a]})[0]);
  }
  chunks_ = Chunks(std::move(sizes));
  if (meta_.zarr_format == 3) {
    const std::string meta_path = (fs::path(path_) / "zarr.json").string();
    codec_ = detail::v3_codec(json::parse(meta_.codecs_json), meta_.dtype, meta_.chunk_shape, meta_.fill_value,
                              meta_path, &meta_.inner_chunk_shape);
  } else {
    if (meta_.codecs_json.empty()) meta_.codecs_json = R"({"compressor": null, "filters": null})";
    codec_ = detail::v2_codec(meta_, (fs::path(path_) / ".zarray").string());
  }
}

bool Store::raw() const { return codec_->raw(); }

std::vector<std::string> Store::describe_codecs() const { return codec_->describe(); }

std::string Store::chunk_key(const std::vector<int64_t>& block) const {
  chunks_.block_shape(block);  // checks the index
  const std::string sep(1, meta_.dimension_separator);
  if (meta_.zarr_format == 2 || meta_.v2_chunk_keys) return block.empty() ? "0" : absl::StrJoin(block, sep);
  return block.empty() ? "c" : absl::StrCat("c", sep, absl::StrJoin(block, sep));
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
  Strides strides = codec_->raw_strides();
  if (strides.size() != meta_.chunk_shape.size())
    strides = NDArray::c_strides(meta_.chunk_shape, meta_.dtype.itemsize());
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

bool Store::decode_file(const std::vector<int64_t>& block, const NDArray& chunk) const {
  const std::string file_path = chunk_path(block);
  // A FIFO or a device in a chunk's place is refused, never waited on.
  std::optional<storage::RegularFile> file = storage::open_regular(file_path, O_RDONLY, /*missing_ok=*/true);
  if (!file) return false;
  const FileSource source(std::move(*file));
  if (codec_->raw() && source.size() != chunk_nbytes()) {
    throw wrong_raw_size(file_path, meta_, chunk_nbytes(), source.size());
  }
  // No codec writes more than its worst case: a bigger file is not this
  // store's chunk, and reading it whole would cost its size in memory.
  if (source.size() > codec_->max_encoded_size()) {
    throw StorageError(file_path, absl::StrCat("chunk ", chunk_key(block), " of ", path_, ": expected at most ",
                                               codec_->max_encoded_size(), " bytes (the most its codecs make of a ",
                                               meta_.dtype.name(), " ", shape_str(meta_.chunk_shape),
                                               " chunk), found ", source.size()));
  }
  try {
    codec_->decode_from(source, chunk);
  } catch (const codec::CodecError& e) {
    throw StorageError(file_path, absl::StrCat("chunk ", chunk_key(block), " of ", path_, ": ", e.what()));
  }
  return true;
}

NDArray Store::read_chunk(const std::vector<int64_t>& block) const {
  const Shape shape = chunks_.block_shape(block);
  if (codec_->raw() && chunk_nbytes() >= kMapChunkBytes) {
    const std::string file_path = chunk_path(block);
    if (!path_exists(file_path)) return NDArray::full(meta_.dtype, shape, meta_.fill_value.value_or(Scalar(0)));
    auto file = MappedFile::open(file_path, access_);
    if (file->size() != chunk_nbytes()) throw wrong_raw_size(file_path, meta_, chunk_nbytes(), file->size());
    return view_of(block, file->region(0, file->size()));
  }
  Buffer bytes = Buffer::allocate(std::max<size_t>(chunk_nbytes(), 1));
  if (!decode_file(block, full_chunk(bytes))) {
    return NDArray::full(meta_.dtype, shape, meta_.fill_value.value_or(Scalar(0)));
  }
  return view_of(block, std::move(bytes));
}

void Store::read_into(const std::vector<int64_t>& block, const NDArray& out) const {
  const Shape shape = chunks_.block_shape(block);
  if (out.dtype() != meta_.dtype || out.shape() != shape || !out.writable()) {
    throw Error(absl::StrCat("zarr chunk ", chunk_key(block), " of ", path_, ": expected a writable ",
                             meta_.dtype.name(), " array of shape ", shape_str(shape), " to read into, found a ",
                             out.writable() ? "" : "read-only ", out.describe()));
  }
  // An edge block is part of a full stored chunk: decoded beside, then copied.
  const bool whole = shape == meta_.chunk_shape;
  const NDArray chunk = whole ? out : full_chunk(detail::thread_scratch(detail::Scratch::chunk, chunk_nbytes()));
  if (!decode_file(block, chunk)) {
    out.fill(meta_.fill_value.value_or(Scalar(0)));
    return;
  }
  if (!whole) detail::copy_from_scratch(view_of(block, chunk.buffer()), out);
}

NDArray Store::map_chunk(const std::vector<int64_t>& block) const {
  if (!writable()) throw StorageError(path_, "cannot write a chunk: the store was opened read-only");
  if (!codec_->raw()) throw StorageError(path_, "cannot map a chunk of an encoded store; use write_chunk");
  const std::string file_path = chunk_path(block);
  fs::create_directories(fs::path(file_path).parent_path());
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
  fs::create_directories(fs::path(file_path).parent_path());
  const bool padded = expected != meta_.chunk_shape;
  if (codec_->raw()) {
    write_mapped(
        file_path,
        [&](std::byte* bytes) {
          Buffer buffer(std::shared_ptr<std::byte>(std::shared_ptr<std::byte>(), bytes), chunk_nbytes(), true);
          if (padded && !fill_is_zero()) full_chunk(buffer).fill(*meta_.fill_value);
          view_of(block, buffer).assign(data);
        },
        chunk_nbytes());
    return;
  }
  NDArray chunk = data;
  if (padded) {
    chunk = NDArray::full(meta_.dtype, meta_.chunk_shape, meta_.fill_value.value_or(Scalar(0)));
    std::vector<Slice> trim;
    for (int64_t extent : expected) trim.emplace_back(0, extent);
    chunk.slice(trim).assign(data);
  }
  detail::EncodedChunk encoded;
  try {
    encoded = codec_->encode(chunk);
  } catch (const codec::CodecError& e) {
    throw StorageError(file_path, absl::StrCat("chunk ", chunk_key(block), ": ", e.what()));
  }
  write_bytes(file_path, encoded.bytes());
}

namespace {

Store open_node(const std::string& path, Access access) {
  const fs::path dir(path);
  if (path_exists(dir / ".zarray")) {
    const std::string meta_path = (dir / ".zarray").string();
    return Store(path, parse_metadata(detail::read_text(meta_path), meta_path), access);
  }
  if (path_exists(dir / "zarr.json")) {
    const std::string meta_path = (dir / "zarr.json").string();
    const std::string text = detail::read_text(meta_path);
    if (detail::string_at(detail::parse_document(text, meta_path), "node_type") == "group") not_an_array(path);
    return Store(path, parse_metadata_v3(text, meta_path), access);
  }
  if (is_group(path)) not_an_array(path);
  if (std::optional<Metadata> m = consolidated(fs::absolute(dir).lexically_normal())) {
    return Store(path, std::move(*m), access);
  }
  not_an_array(path);
}

}  // namespace

Store open(const std::string& path, Access access) {
  try {
    return open_node(path, access);
  } catch (const json::exception& e) {
    // Every field is checked before it is read; this is the net for one that
    // is not, so that hostile metadata still gets an error naming the store.
    throw StorageError(path, absl::StrCat("bad zarr metadata: ", e.what()));
  }
}

Store create(const std::string& path, DType dtype, const Shape& shape, const Shape& chunk_shape,
             std::optional<Scalar> fill_value, const Format& format) {
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
  if (format.zarr_format != 2 && format.zarr_format != 3) {
    throw ValueError(absl::StrCat("zarr_format: expected 2 or 3, found ", format.zarr_format));
  }
  Metadata m;
  m.zarr_format = format.zarr_format;
  m.dtype = dtype;
  m.shape = shape;
  m.chunk_shape = chunk_shape;
  m.fill_value = std::move(fill_value);
  if (m.fill_value) dispatch(dtype, [&]<class T>() { (void)m.fill_value->to<T>(); });
  const codec::CodecPtr compressor = codec::from_spec(format.codec, dtype);
  if (format.zarr_format == 2) {
    if (!format.inner_chunks.empty()) throw ValueError("sharding (inner chunks) needs zarr_format 3");
    json filters = nullptr;
    for (const std::string& spec : format.filters) filters.push_back(codec::filter_from_spec(spec, dtype)->v2_json());
    m.codecs_json =
        json{{"compressor", compressor ? compressor->v2_json() : json(nullptr)}, {"filters", filters}}.dump();
  } else {
    if (!format.filters.empty()) {
      throw ValueError("filters (delta, fixedscaleoffset) are zarr v2's; zarr_format 3 has none");
    }
    if (!m.fill_value) m.fill_value = Scalar(0);
    m.dimension_separator = '/';
    json chain = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}});
    if (compressor) {
      json c = compressor->v3_json();
      if (c.is_null()) {
        throw CodecSpecError(absl::StrCat("codec '", compressor->name(),
                                          "' has no zarr v3 form; expected none, blosc, zstd or gzip"));
      }
      chain.push_back(c);
    }
    if (!format.inner_chunks.empty()) {
      if (format.inner_chunks.size() != shape.size()) {
        throw ChunkError(absl::StrCat("inner chunks ", shape_str(format.inner_chunks),
                                      ": expected one size per axis of shape ", shape_str(shape)));
      }
      for (size_t a = 0; a < shape.size(); ++a) {
        if (format.inner_chunks[a] <= 0 || chunk_shape[a] % format.inner_chunks[a] != 0) {
          throw ChunkError(absl::StrCat("inner chunks ", shape_str(format.inner_chunks),
                                        " must divide the shard shape ", shape_str(chunk_shape), " (axis ", a, ")"));
        }
      }
      json index = json::array({{{"name", "bytes"}, {"configuration", {{"endian", "little"}}}}, {{"name", "crc32c"}}});
      chain = json::array({{{"name", "sharding_indexed"},
                            {"configuration",
                             {{"chunk_shape", format.inner_chunks},
                              {"codecs", chain},
                              {"index_codecs", index},
                              {"index_location", "end"}}}}});
    }
    m.codecs_json = chain.dump();
  }
  const std::string file = format.zarr_format == 2 ? ".zarray" : "zarr.json";
  detail::check_sizes(shape, chunk_shape, dtype, (fs::path(path) / file).string());
  std::error_code ec;
  fs::create_directories(path, ec);
  if (ec) throw StorageError(path, "cannot create the directory", ec.value());
  if (path_exists(fs::path(path) / ".zarray") || path_exists(fs::path(path) / "zarr.json")) {
    throw StorageError(path, "a zarr array exists here already");
  }
  Store store(path, std::move(m), Access::ReadWrite);
  detail::write_text((fs::path(path) / file).string(), format_metadata(store.metadata()));
  return store;
}

std::string format_metadata(const Metadata& metadata) {
  return metadata.zarr_format == 3 ? detail::format_v3(metadata) : detail::format_v2(metadata);
}

}  // namespace tessera::array::zarr
