#include "tessera/array/ops/creation.hpp"

#include <sys/stat.h>

#include <memory>
#include <mutex>
#include <string>

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "tessera/array/io/mapped_file.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

// A layer with one task per block, `make(block index)` giving each task.
template <class F>
Graph block_layer(const std::string& name, const Chunks& chunks, F&& make) {
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) { layer.put(Key(name, idx), make(idx)); });
  return layer;
}

// A file's identity for tokens: path, size and modification time, so a
// rewritten file gets new names.
std::string file_identity(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return path;
  return absl::StrCat(path, ":", st.st_size, ":", st.st_mtim.tv_sec, ".", st.st_mtim.tv_nsec);
}

uint64_t splitmix64(uint64_t& state) {
  uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

template <class T>
void fill_uniform(T* out, int64_t n, uint64_t state) {
  for (int64_t i = 0; i < n; ++i) {
    const uint64_t r = splitmix64(state);
    if constexpr (std::is_same_v<T, Eigen::half>) {  // 11 bits: every value exact, none rounds up to 1
      out[i] = Eigen::half(static_cast<float>(r >> 53) * 0x1.0p-11f);
    } else if constexpr (std::is_same_v<T, float>) {
      out[i] = static_cast<float>(r >> 40) * 0x1.0p-24f;
    } else {
      out[i] = static_cast<double>(r >> 11) * 0x1.0p-53;
    }
  }
}

}  // namespace

// Blocks that are each one contiguous run of the file: "auto" along the slowest
// axis, whole along the others, unless one slice along it is itself too large.
ChunkSpec contiguous_auto(const npy::Header& h) {
  const size_t n = h.shape.size();
  if (n == 0) return ChunkSpec(std::vector<AxisChunks>{});
  int64_t slice_bytes = static_cast<int64_t>(h.dtype.itemsize());
  for (size_t k = 0; k < n; ++k) {
    if (k != (h.fortran_order ? n - 1 : 0)) slice_bytes *= std::max<int64_t>(h.shape[k], 1);
  }
  if (slice_bytes > kDefaultChunkBytes) return "auto";
  std::vector<AxisChunks> axes(n, AxisChunks(-1));
  axes[h.fortran_order ? n - 1 : 0] = AxisChunks("auto");
  return axes;
}

// One mapping of a file shared by an Array's block tasks, made by the first task
// that runs (building the graph maps nothing) and kept while the graph lives.
// Measured on bench/array: mapping the file again for each block (and unmapping
// it when the block is released) cost a third more time than numpy's single
// mapping, in page-table setup and teardown and in the mmap lock, which
// serializes workers. The pages are clean page-cache pages that the kernel
// reclaims under pressure, so keeping the mapping holds no memory of its own.
class SharedMapping {
 public:
  explicit SharedMapping(std::string path) : path_(std::move(path)) {}
  std::shared_ptr<MappedFile> get() {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!file_) file_ = MappedFile::open(path_);
    return file_;
  }

 private:
  std::string path_;
  std::mutex mutex_;
  std::shared_ptr<MappedFile> file_;
};

// Block `region` of the .npy file whose header is `h`, a view of the mapping.
NDArray npy_block(SharedMapping& mapping, const npy::Header& h, const std::vector<Slice>& region) {
  std::shared_ptr<MappedFile> file = mapping.get();
  int64_t count = 1;
  for (int64_t s : h.shape) count *= s;
  const size_t nbytes = static_cast<size_t>(count) * h.dtype.itemsize();
  if (file->size() != h.data_offset + nbytes) {
    throw StorageError(file->path(), "the file changed size since from_npy read its header: expected " +
                                         std::to_string(h.data_offset + nbytes) + " bytes, found " +
                                         std::to_string(file->size()));
  }
  Strides strides = h.fortran_order ? NDArray::f_strides(h.shape, h.dtype.itemsize())
                                    : NDArray::c_strides(h.shape, h.dtype.itemsize());
  // The block's place in the data, found on a view that owns nothing; the block
  // then holds only the bytes it spans, so that its pages leave memory with it.
  const Buffer unowned(std::shared_ptr<std::byte>(std::shared_ptr<void>(), file->data() + h.data_offset), nbytes,
                       false);
  const NDArray place = NDArray(unowned, h.dtype, h.shape, std::move(strides), 0).slice(region);
  const auto [first, end] = place.byte_span();
  NDArray block(file->region(h.data_offset + static_cast<size_t>(first), static_cast<size_t>(end - first)), h.dtype,
                place.shape(), place.strides(), place.offset() - first);
  return h.big_endian ? npy::to_native(block) : block;  // big-endian: a swapped copy
}

Array from_npy(const std::string& path) { return from_npy(path, contiguous_auto(npy::read_header(path))); }

Array from_npy(const std::string& path, const ChunkSpec& chunks) {
  const npy::Header h = npy::read_header(path);
  Chunks c = normalize_chunks(chunks, h.shape, h.dtype);
  const std::string name = absl::StrCat("from-npy-", token({"from_npy", file_identity(path), c.str()}));
  auto mapping = std::make_shared<SharedMapping>(path);
  Graph layer = block_layer(name, c, [&](std::span<const int64_t> idx) {
    auto f = [mapping, h, region = block_region(c, idx)] { return npy_block(*mapping, h, region); };
    return Task(fn("from_npy", std::move(f)));
  });
  return Array(name, std::move(c), h.dtype, std::move(layer));
}

Array from_zarr(const std::string& path) {
  auto store = std::make_shared<const zarr::Store>(zarr::open(path));
  Chunks c = store->chunks();
  const std::string name =
      absl::StrCat("from-zarr-", unique_token());  // chunk files change without .zarray changing
  Graph layer = block_layer(name, c, [&](std::span<const int64_t> idx) {
    auto f = [store, block = std::vector<int64_t>(idx.begin(), idx.end())] { return store->read_chunk(block); };
    return Task(fn("from_zarr", std::move(f)));
  });
  auto fill = [store](std::span<const int64_t> idx, const NDArray& out) {
    store->read_into(std::vector<int64_t>(idx.begin(), idx.end()), out);
  };
  return Array(name, std::move(c), store->dtype(), std::move(layer), std::move(fill));
}

namespace {

// Writes the box `region` of `store` into `out` (the box's shape), chunk by
// chunk: a chunk inside the box decodes straight into its place (read_into),
// one the box cuts is read whole and its part copied.
void read_box(const zarr::Store& store, const std::vector<Slice>& region, const NDArray& out) {
  const Shape& cs = store.chunk_shape();
  const size_t n = cs.size();
  std::vector<int64_t> first(n), count(n);
  for (size_t a = 0; a < n; ++a) {
    first[a] = *region[a].start / cs[a];
    count[a] = *region[a].stop <= *region[a].start ? 0 : (*region[a].stop - 1) / cs[a] - first[a] + 1;
  }
  const Chunks& grid = store.chunks();
  std::vector<int64_t> chunk(n);
  std::vector<Slice> in_chunk(n), in_out(n);
  for_each_index(count, [&](std::span<const int64_t> k) {
    bool whole = true;
    for (size_t a = 0; a < n; ++a) {
      chunk[a] = first[a] + k[a];
      const int64_t lo = chunk[a] * cs[a], hi = lo + grid[a][static_cast<size_t>(chunk[a])];
      const int64_t from = std::max(lo, *region[a].start), to = std::min(hi, *region[a].stop);
      whole = whole && from == lo && to == hi;
      in_chunk[a] = Slice(from - lo, to - lo);
      in_out[a] = Slice(from - *region[a].start, to - *region[a].start);
    }
    const NDArray place = out.slice(in_out);
    if (whole) {
      store.read_into(chunk, place);
    } else {
      place.assign(store.read_chunk(chunk).slice(in_chunk));
    }
  });
}

}  // namespace

Array from_zarr(const std::string& path, const ChunkSpec& chunks) {
  auto store = std::make_shared<const zarr::Store>(zarr::open(path));
  Chunks c = normalize_chunks(chunks, store->shape(), store->dtype());
  const std::string name = absl::StrCat("from-zarr-", unique_token());
  Graph layer = block_layer(name, c, [&](std::span<const int64_t> idx) {
    auto f = [store, region = block_region(c, idx), shape = c.block_shape({idx.begin(), idx.end()})] {
      NDArray out = NDArray::empty(store->dtype(), shape);
      read_box(*store, region, out);
      return out;
    };
    return Task(fn("from_zarr", std::move(f)));
  });
  auto fill = [store, c](std::span<const int64_t> idx, const NDArray& out) {
    read_box(*store, block_region(c, idx), out);
  };
  return Array(name, std::move(c), store->dtype(), std::move(layer), std::move(fill));
}

Array from_blocks(BlockMaker make, DType dtype, const Shape& shape, const ChunkSpec& chunks) {
  Chunks c = normalize_chunks(chunks, shape, dtype);
  const std::string name = absl::StrCat("from-function-", unique_token());
  auto shared = std::make_shared<const BlockMaker>(std::move(make));
  Graph layer = block_layer(name, c, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> block(idx.begin(), idx.end());
    auto f = [shared, offset = c.block_offset(block), s = c.block_shape(block), dtype, key = Key(name, idx)] {
      NDArray b = (*shared)(offset, s);
      check_block(b, s, dtype, key, "from_function");
      return b;
    };
    return Task(fn("from_function", std::move(f)));
  });
  return Array(name, std::move(c), dtype, std::move(layer));
}

Array full(const Shape& shape, const Scalar& value, const ChunkSpec& chunks, std::optional<DType> dtype) {
  const DType d = dtype.value_or(value.dtype());
  dispatch(d, [&]<class T>() { (void)value.to<T>(); });  // TypeError now, not in a task
  Chunks c = normalize_chunks(chunks, shape, d);
  const std::string name =
      absl::StrCat("full-", token({"full", shape_str(shape), c.str(), d.str(), value.dtype().str(), value.str()}));
  Graph layer = block_layer(name, c, [&](std::span<const int64_t> idx) {
    auto f = [d, value, s = c.block_shape(std::vector<int64_t>(idx.begin(), idx.end()))] {
      return NDArray::full(d, s, value);
    };
    return Task(fn("full", std::move(f)));
  });
  return Array(name, std::move(c), d, std::move(layer));
}

Array zeros(const Shape& shape, const ChunkSpec& chunks, DType dtype) { return full(shape, 0, chunks, dtype); }
Array ones(const Shape& shape, const ChunkSpec& chunks, DType dtype) { return full(shape, 1, chunks, dtype); }

Array random(const Shape& shape, const ChunkSpec& chunks, uint64_t seed, DType dtype) {
  if (!dtype.is_floating()) {
    throw TypeError(absl::StrCat("random: expected a floating dtype (float16, float32 or float64), found ",
                                 std::string(dtype.name())));
  }
  Chunks c = normalize_chunks(chunks, shape, dtype);
  const std::string name =
      absl::StrCat("random-", token({"random", shape_str(shape), c.str(), std::to_string(seed), dtype.str()}));
  Graph layer = block_layer(name, c, [&](std::span<const int64_t> idx) {
    // The block's stream: the seed and the block index mixed together.
    uint64_t state = seed ^ 0x243f6a8885a308d3ULL;
    for (int64_t i : idx) {
      uint64_t s = state ^ static_cast<uint64_t>(i);
      state = splitmix64(s);
    }
    auto f = [dtype, state, s = c.block_shape(std::vector<int64_t>(idx.begin(), idx.end()))] {
      NDArray out = NDArray::empty(dtype, s);
      if (dtype == DType::float16()) {
        fill_uniform(out.data<Eigen::half>(), out.size(), state);
      } else if (dtype == DType::float32()) {
        fill_uniform(out.data<float>(), out.size(), state);
      } else {
        fill_uniform(out.data<double>(), out.size(), state);
      }
      return out;
    };
    return Task(fn("random", std::move(f)));
  });
  return Array(name, std::move(c), dtype, std::move(layer));
}

Array from_ndarray(const NDArray& data, const ChunkSpec& chunks) {
  if (!data.has_value()) throw Error("from_ndarray: the NDArray is empty (has no value)");
  Chunks c = normalize_chunks(chunks, data.shape(), data.dtype());
  const std::string name = absl::StrCat("array-", unique_token());
  Graph layer;
  for_each_block(c, [&](std::span<const int64_t> idx) {
    layer.put(Key(name, idx), Value(data.slice(block_region(c, idx))));
  });
  return Array(name, std::move(c), data.dtype(), std::move(layer));
}

}  // namespace tessera::array
