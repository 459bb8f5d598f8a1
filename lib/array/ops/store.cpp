#include "tessera/array/ops/store.hpp"

#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "array/ops/store.hpp"
#include "storage/publish_across.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/scheduler/get.hpp"

namespace tessera::array {
namespace {

namespace fs = std::filesystem;

void store_npy(const Array& x, const std::string& tmp, const std::string& name, const StoreOptions& options) {
  store_into(x, npy::create(tmp, x.dtype(), x.shape()), name, options.compute);
}

zarr::Store create_zarr(const Array& x, const std::string& tmp, const StoreOptions& options) {
  return zarr::create(tmp, x.dtype(), x.shape(), regular_chunk_shape(x.chunks()), Scalar(0), options.zarr);
}

// Each block's task writes its chunk into `target` (across ranks: the blocks this rank owns).
void write_zarr(const Array& x, std::shared_ptr<const zarr::Store> target, const std::string& name,
                const StoreOptions& options) {
  write_blocks(
      x, name,
      [target](const std::vector<int64_t>& block, const NDArray& b) {
        if (target->raw()) {
          target->map_chunk(block).assign(b);  // dirty pages of a shared mapping: the page cache has them
        } else {
          target->write_chunk(block, b);  // encoded here, in the block's task
        }
      },
      options.compute);
}

void store_zarr(const Array& x, const std::string& tmp, const std::string& name, const StoreOptions& options) {
  write_zarr(x, std::make_shared<const zarr::Store>(create_zarr(x, tmp, options)), name, options);
}

// An HDF5 dataset, alone in a new file: each block's task encodes its chunk
// and writes it with H5Dwrite_chunk under libhdf5's lock (hdf5.hpp).
// A file named .nc or .nc4 is NetCDF-4.
void store_hdf5(const Array& x, const std::string& tmp, const std::pair<std::string, std::string>& target,
                const std::string& name, const StoreOptions& options) {
  const auto& [file, dataset] = target;
  hdf5::Format format = options.hdf5;
  format.netcdf = format.netcdf || absl::EndsWith(file, ".nc") || absl::EndsWith(file, ".nc4");
  const Shape chunk_shape = x.ndim() == 0 ? Shape{} : regular_chunk_shape(x.chunks());
  auto out =
      std::make_shared<const hdf5::Dataset>(hdf5::create(tmp, dataset, x.dtype(), x.shape(), chunk_shape, format));
  write_blocks(
      x, name, [out](const std::vector<int64_t>& block, const NDArray& b) { out->write_chunk(block, b); },
      options.compute);
  out->close();
}

// store across the ranks of options.compute.communicator: rank 0 makes the
// temporary store, every rank's run (a run across ranks) writes the chunks of
// the blocks it owns, and rank 0 publishes once every rank has written.
void store_across(const Array& x, const std::string& path, const std::string& name, const StoreOptions& options) {
  const storage::PublishOptions publish = publish_options(path, options);
  require_zarr_across("store", path, publish);
  storage::publish_across(
      *options.compute.communicator, path, publish, [&](const std::string& tmp) { (void)create_zarr(x, tmp, options); },
      [&](const std::string& tmp) {
        write_zarr(x, std::make_shared<const zarr::Store>(zarr::open(tmp, Access::ReadWrite)), name, options);
      });
}

// The fill of the layer that makes x's blocks, when it has one.
const BlockFill* block_fill(const Array& x) {
  for (const auto& l : x.layers()) {
    if (l->name == x.name() && l->fill) return &l->fill;
  }
  return nullptr;
}

// Blocks per fill task: a task per block would cost more in scheduling than
// small blocks cost to read, so neighbours (in C order: the same file run for
// row-major stores) go together, up to a few MiB, keeping enough tasks for
// every worker to stay busy to the end.
int64_t blocks_per_task(const Array& x) {
  constexpr int64_t kTaskBytes = int64_t{4} << 20, kMinTasks = 64;
  const int64_t blocks = x.chunks().total_blocks();
  const int64_t block_bytes = std::max<int64_t>(x.nbytes() / std::max<int64_t>(blocks, 1), 1);
  const int64_t by_size = std::max<int64_t>(kTaskBytes / block_bytes, 1);
  return std::clamp<int64_t>(blocks / kMinTasks, 1, by_size);
}

// store_into for an array whose blocks its layer's fill writes in place: tasks
// without inputs, each filling a run of blocks.
void fill_into(const Array& x, const BlockFill& fill, const NDArray& target, const std::string& name,
               const ComputeOptions& options) {
  std::vector<std::vector<int64_t>> blocks;
  for_each_block(x.chunks(), [&](std::span<const int64_t> idx) { blocks.emplace_back(idx.begin(), idx.end()); });
  const auto shared = std::make_shared<const std::vector<std::vector<int64_t>>>(std::move(blocks));
  const int64_t per_task = blocks_per_task(x);
  const auto total = static_cast<int64_t>(shared->size());
  Graph g;
  std::vector<Key> keys;
  for (int64_t first = 0, t = 0; first < total; first += per_task, ++t) {
    const int64_t last = std::min(total, first + per_task);
    auto f = [shared, fill, target, chunks = x.chunks(), first, last] {
      int64_t bytes = 0;
      for (int64_t i = first; i < last; ++i) {
        const NDArray place = target.slice(block_region(chunks, (*shared)[static_cast<size_t>(i)]));
        fill((*shared)[static_cast<size_t>(i)], place);
        bytes += static_cast<int64_t>(place.nbytes());
      }
      return bytes;
    };
    Key k(name, {t});
    g.put(k, Task(fn("fill", std::move(f))));
    keys.push_back(std::move(k));
  }
  (void)tessera::get(g, Keys(keys), options);
}

// A path that names an HDF5 file but no dataset in it: a zarr store named
// "out.h5" is not what anyone means.
void refuse_bare_hdf5(const std::string& path) {
  for (const char* ext : {".h5", ".hdf5", ".he5", ".nc", ".nc4"}) {
    if (absl::EndsWith(path, ext)) {
      throw StorageError(path, absl::StrCat("expected an HDF5 target with its dataset, such as ", path, ":/data"));
    }
  }
}

}  // namespace

void write_blocks(const Array& x, const std::string& name, BlockWrite write, const ComputeOptions& options) {
  const auto shared = std::make_shared<const BlockWrite>(std::move(write));
  Graph g = x.graph();
  std::vector<Key> keys;
  for_each_block(x.chunks(), [&](std::span<const int64_t> idx) {
    std::vector<int64_t> block(idx.begin(), idx.end());
    auto f = [shared, block](const NDArray& b) {
      (*shared)(block, b);
      return static_cast<int64_t>(b.nbytes());  // nothing big is held between tasks
    };
    Key k(name, idx);
    g.put(k, Task(fn("store", std::move(f)), ref(x.block_key(idx))));
    keys.push_back(std::move(k));
  });
  (void)tessera::get(g, Keys(keys), options);
}

void store_into(const Array& x, const NDArray& target, const std::string& name, const ComputeOptions& options) {
  if (const BlockFill* fill = block_fill(x)) {
    fill_into(x, *fill, target, name, options);
    return;
  }
  const Chunks chunks = x.chunks();
  write_blocks(
      x, name,
      [target, chunks](const std::vector<int64_t>& block, const NDArray& b) {
        target.slice(block_region(chunks, block)).assign(b);
      },
      options);
}

storage::PublishOptions publish_options(const std::string& path, const StoreOptions& options) {
  const storage::Kind kind = hdf5::split_target(path)       ? storage::Kind::hdf5
                             : absl::EndsWith(path, ".npy") ? storage::Kind::npy
                                                            : storage::Kind::zarr;
  return {.kind = kind, .overwrite = options.overwrite, .protect = options.protect};
}

void store(const Array& x, const NDArray& target, const ComputeOptions& options) {
  if (target.shape() != x.shape() || target.dtype() != x.dtype() || !target.writable()) {
    throw Error(absl::StrCat("store: expected a writable ", x.dtype().name(), " array of shape ", shape_str(x.shape()),
                             " as the target of '", x.name(), "', found a ", target.writable() ? "" : "read-only ",
                             target.describe()));
  }
  store_into(x, target, absl::StrCat("store-", unique_token()), options);
}

void require_zarr_across(const std::string& what, const std::string& path, const storage::PublishOptions& publish) {
  if (publish.kind != storage::Kind::zarr) {
    throw StorageError(path, absl::StrCat(what, " across ranks writes zarr stores only, not .npy files"));
  }
}

void store(const Array& x, const std::string& path, const StoreOptions& options) {
  const std::string name = absl::StrCat("store-", unique_token());
  if (options.compute.communicator) return store_across(x, path, name, options);
  const storage::PublishOptions publish = publish_options(path, options);
  const auto hdf5_target = hdf5::split_target(path);
  if (!hdf5_target) refuse_bare_hdf5(path);
  storage::publish(hdf5::file_of(path), publish, [&](const std::string& tmp) {
    if (hdf5_target) {
      store_hdf5(x, tmp, *hdf5_target, name, options);
    } else if (publish.kind == storage::Kind::npy) {
      store_npy(x, tmp, name, options);
    } else {
      store_zarr(x, tmp, name, options);
    }
  });
}

void check_target(const std::string& path, const StoreOptions& options) {
  if (!hdf5::split_target(path)) refuse_bare_hdf5(path);
  storage::check_target(hdf5::file_of(path), publish_options(path, options));
}

std::vector<std::string> clean_temporaries(const std::string& path) {
  return storage::clean_stale(hdf5::file_of(path));
}

}  // namespace tessera::array
