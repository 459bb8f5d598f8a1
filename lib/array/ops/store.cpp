#include "tessera/array/ops/store.hpp"

#include <stdio.h>

#include <algorithm>
#include <cerrno>
#include <filesystem>
#include <string>
#include <system_error>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>

#include "array/ops/store.hpp"
#include "array/block.hpp"
#include "array/ops/store.hpp"
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

storage::PublishOptions publish_options(const std::string& path, const StoreOptions& options) {
  return {.kind = absl::EndsWith(path, ".npy") ? storage::Kind::npy : storage::Kind::zarr,
          .overwrite = options.overwrite,
          .protect = options.protect};
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
  const storage::PublishOptions publish = publish_options(path, options);
  storage::publish(path, publish, [&](const std::string& tmp) {
    if (publish.kind == storage::Kind::npy) {
      store_npy(x, tmp, name, options);
    } else {
      store_zarr(x, tmp, name, options);
    }
  });
}

void check_target(const std::string& path, const StoreOptions& options) {
  storage::check_target(path, publish_options(path, options));
}

std::vector<std::string> clean_temporaries(const std::string& path) { return storage::clean_stale(path); }

}  // namespace tessera::array
