// rechunk_path: the `tessera rechunk` command's work, by path, for the command and for Python.
#include "tessera/array/rechunk/rechunk_path.hpp"

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <new>
#include <string>
#include <thread>
#include <vector>

#include "tessera/array/io/npy.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {

namespace fs = std::filesystem;

int64_t rechunk_block_limit(int64_t max_mem, int workers) {
  return std::max<int64_t>(max_mem / (2 * static_cast<int64_t>(std::max(workers, 1)) + 2), 1);
}

Array open_rechunk_source(const std::string& path, int64_t block_limit) {
  try {
    if (path.size() > 4 && path.ends_with(".npy")) {
      // Blocks of whole rows (slices along the slowest axis) under the block
      // limit: each one contiguous run of the file.
      const npy::Header h = npy::read_header(path);
      std::vector<AxisChunks> axes(h.shape.size(), AxisChunks(-1));
      if (!h.shape.empty()) {
        int64_t row = static_cast<int64_t>(h.dtype.itemsize());
        const size_t slow = h.fortran_order ? h.shape.size() - 1 : 0;
        for (size_t k = 0; k < h.shape.size() && row <= block_limit; ++k) {
          // Saturates: a row beyond the limit gets blocks of one row whatever its size.
          const int64_t e = k == slow ? 1 : std::max<int64_t>(h.shape[k], 1);
          row = e > block_limit / row ? block_limit + 1 : row * e;
        }
        axes[slow] = AxisChunks(std::max<int64_t>(block_limit / row, 1));
      }
      return from_npy(path, ChunkSpec(std::move(axes)));
    }
    return from_zarr(path);
  } catch (const Error&) {
    throw;
  } catch (const std::bad_alloc&) {
    throw StorageError(path, "cannot open: it needs more memory than this machine gives (std::bad_alloc)");
  } catch (const std::exception& e) {
    // The standard library's messages (basic_filebuf::underflow, vector max_size) name no file.
    throw StorageError(path, std::string("cannot open: ") + e.what());
  }
}

void check_rechunk_memory(const Chunks& target, DType dtype, int64_t max_mem, int workers) {
  const int64_t block_limit = rechunk_block_limit(max_mem, workers);
  int64_t block = static_cast<int64_t>(dtype.itemsize());
  for (int64_t e : target.max_block_shape()) {
    if (e > 0 && block > INT64_MAX / e) block = INT64_MAX;
    else block *= e;
  }
  if (block <= block_limit) return;
  const int64_t per_block = 2 * static_cast<int64_t>(std::max(workers, 1)) + 2;
  const int64_t needed = block > INT64_MAX / per_block ? INT64_MAX : block * per_block;
  throw ChunkError(std::to_string(max_mem) + " bytes cannot hold the blocks of chunks " +
                   shape_str(target.max_block_shape()) + " (" + std::to_string(block) + " bytes each, " +
                   std::to_string(per_block) + " of them with " + std::to_string(workers) +
                   " workers); the smallest max_mem that works is " + std::to_string(needed) +
                   " bytes, or choose smaller chunks or fewer workers");
}

RechunkStoreResult rechunk_path(const std::string& source, const std::string& target, const RechunkSpec& chunks,
                                const RechunkPathOptions& options) {
  if (options.max_mem <= 0) {
    throw ChunkError("max_mem: expected a positive size, found " + std::to_string(options.max_mem));
  }
  const int workers = options.num_workers > 0 ? options.num_workers
                                              : static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  StoreOptions store{.overwrite = options.overwrite, .protect = {source}, .zarr = options.format};
  check_target(target, store);

  const int64_t block_limit = rechunk_block_limit(options.max_mem, workers);
  const Array x = open_rechunk_source(source, block_limit);
  const Chunks new_chunks = chunks.resolve(x.chunks(), x.dtype(), block_limit);
  check_rechunk_memory(new_chunks, x.dtype(), options.max_mem, workers);

  RechunkOptions rechunk{.method = options.method,
                         .block_size_limit = block_limit,
                         .scratch_dir = options.scratch_dir.empty() ? fs::absolute(target).parent_path().string()
                                                                    : options.scratch_dir};
  store.compute = options.compute;
  store.compute.num_workers = workers;
  // The scheduler's budget makes max_mem a bound for every method: results held
  // beyond it (the tasks method's intermediate blocks) spill to the scratch folder.
  store.compute.memory_limit = static_cast<size_t>(options.max_mem);
  store.compute.scratch_dir = rechunk.scratch_dir;
  // "auto" lets rechunk_store write straight into the chunk files; a named
  // method always goes through rechunk with it.
  RechunkStoreOptions store_options;
  store_options.method = options.method == RechunkMethod::automatic ? RechunkStoreMethod::direct_when_runs_are_long
                                                                    : RechunkStoreMethod::through_rechunk;
  store_options.rechunk = rechunk;
  store_options.store = std::move(store);
  return rechunk_store(x, new_chunks, target, store_options);
}

}  // namespace tessera::array
