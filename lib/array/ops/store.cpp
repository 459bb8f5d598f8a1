#include "tessera/array/ops/store.hpp"

#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include "array/array_blocks.hpp"
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

void store_zarr(const Array& x, const std::string& tmp, const std::string& name, const StoreOptions& options) {
  auto target = std::make_shared<const zarr::Store>(
      zarr::create(tmp, x.dtype(), x.shape(), regular_chunk_shape(x.chunks()), Scalar(0), options.zarr));
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

}  // namespace

void write_blocks(const Array& x, const std::string& name, BlockWrite write, const ComputeOptions& options) {
  const auto shared = std::make_shared<const BlockWrite>(std::move(write));
  Graph g = x.graph();
  std::vector<Key> keys;
  for_each_block(x.chunks(), [&](absl::Span<const int64_t> idx) {
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
  const Chunks chunks = x.chunks();
  write_blocks(
      x, name,
      [target, chunks](const std::vector<int64_t>& block, const NDArray& b) {
        Shape offset = chunks.block_offset(block), shape = chunks.block_shape(block);
        std::vector<Slice> region;
        for (size_t k = 0; k < block.size(); ++k) region.push_back(Slice{offset[k], offset[k] + shape[k], 1});
        target.slice(region).assign(b);
      },
      options);
}

Shape regular_chunk_shape(const Chunks& chunks) {
  Shape chunk;
  for (size_t k = 0; k < chunks.ndim(); ++k) {
    const auto& sizes = chunks[k];
    for (size_t i = 0; i + 1 < sizes.size(); ++i) {
      if (sizes[i] != sizes[0] || sizes.back() > sizes[0]) {
        throw ChunkError(absl::StrCat("store to zarr needs regular chunks (equal blocks but a smaller last one), "
                                      "found ", chunks.str(), " along axis ", k, "; rechunk first"));
      }
    }
    chunk.push_back(std::max<int64_t>(sizes[0], 1));
  }
  return chunk;
}

void write_target(const std::string& path, bool overwrite, absl::FunctionRef<void(const std::string& tmp)> write) {
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(path, ec));
  if (exists && !overwrite) {
    throw StorageError(path, "the target exists; pass overwrite to replace it");
  }
  // Next to the target, so the final rename stays within one file system.
  const std::string tmp = absl::StrCat(path, ".tmp-", unique_token());
  try {
    write(tmp);
    if (exists && fs::is_directory(path)) fs::remove_all(path);
    if (::rename(tmp.c_str(), path.c_str()) != 0) {
      throw StorageError(path, absl::StrCat("could not rename ", tmp, " to the target"), errno);
    }
  } catch (...) {
    fs::remove_all(tmp, ec);  // nothing left behind; the original error matters more
    throw;
  }
}

void store(const Array& x, const NDArray& target, const ComputeOptions& options) {
  if (target.shape() != x.shape() || target.dtype() != x.dtype() || !target.writable()) {
    throw Error(absl::StrCat("store: expected a writable ", x.dtype().name(), " array of shape ", shape_str(x.shape()),
                             " as the target of '", x.name(), "', found a ", target.writable() ? "" : "read-only ",
                             target.describe()));
  }
  store_into(x, target, absl::StrCat("store-", unique_token()), options);
}

void store(const Array& x, const std::string& path, const StoreOptions& options) {
  const std::string name = absl::StrCat("store-", unique_token());
  write_target(path, options.overwrite, [&](const std::string& tmp) {
    if (absl::EndsWith(path, ".npy")) {
      store_npy(x, tmp, name, options);
    } else {
      store_zarr(x, tmp, name, options);
    }
  });
}

}  // namespace tessera::array
