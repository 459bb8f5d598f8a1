// tessera/array/ops/creation.hpp — Arrays from files, constants, random numbers,
// functions and in-memory blocks.
//
// Every creation is lazy: it builds one task per block and reads or makes no
// data until the graph runs. `from_npy` and `from_zarr` read only the header
// (or `.zarray`) when called; each block's task maps its region of the file
// when it runs, so a block is used in place and the page cache, not the
// process, holds the data.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array x = ta::from_npy("big.npy", {4096, -1});           // mapped, lazy
//   ta::Array z = ta::from_zarr("big.zarr");                     // the store's chunks
//   ta::Array r = ta::random({1000, 1000}, {250, 250}, /*seed=*/7);
//   ta::Array f = ta::from_function<int64_t>(
//       [](std::span<const int64_t> i) { return i[0] * 10 + i[1]; }, {4, 5}, 2);
// @endcode
//
// Thread-safe: these functions may be called from any thread.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <utility>

#include <span>

#include "tessera/array/array.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/grid.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"

namespace tessera::array {

//! The .npy file at `path` cut into `chunks` (see normalize_chunks). Reads the
//! header now (StorageError for a missing or malformed file); the first block task
//! that runs maps the file, once for all blocks, and each block is a view of its
//! region. The mapping lasts as long as the Array's graph.
Array from_npy(const std::string& path, const ChunkSpec& chunks);
//! The same with blocks that are each one contiguous run of the file under 128 MiB
//! ("auto" along the slowest axis, whole along the others; plain "auto" when one
//! slice along that axis is larger): the fastest way to read a file.
Array from_npy(const std::string& path);

//! The zarr v2 array stored in the directory `path`, one block per zarr chunk
//! (edge blocks are views of the full-size edge chunks). Reads `.zarray` now;
//! each block's task maps its chunk file when it runs (a missing chunk file
//! gives a block of `fill_value`).
Array from_zarr(const std::string& path);
//! The same array cut into blocks `chunks` (see normalize_chunks), as dask's
//! `from_zarr(url, chunks=...)`: each block's task reads every zarr chunk it
//! overlaps, a chunk it holds wholly decoded straight into its place. Blocks
//! of many small chunks make a graph of a few tasks where one task per chunk
//! would hold ~1 KiB each: the way to read a store of millions of tiny chunks.
//! @code
//!   auto x = tessera::array::from_zarr("tiny.zarr", {128, -1});   // 1x1 chunks, 128-row blocks
//! @endcode
Array from_zarr(const std::string& path, const ChunkSpec& chunks);

//! An array of zeros.
Array zeros(const Shape& shape, const ChunkSpec& chunks = "auto", DType dtype = DType::float64());
//! An array of ones.
Array ones(const Shape& shape, const ChunkSpec& chunks = "auto", DType dtype = DType::float64());
//! An array with every element `value`, of `dtype` (default: the value's own dtype:
//! bool, int64, uint64, float64 or complex128). TypeError when `value` does not fit `dtype`.
Array full(const Shape& shape, const Scalar& value, const ChunkSpec& chunks = "auto",
           std::optional<DType> dtype = std::nullopt);

//! Uniform random numbers in [0, 1) of a floating `dtype` (TypeError for others).
//! Block (i, j, ...) is drawn from a generator seeded by `seed` and the block's
//! index, so the same seed and chunks give the same array on any number of workers.
Array random(const Shape& shape, const ChunkSpec& chunks = "auto", uint64_t seed = 0,
             DType dtype = DType::float64());

//! Makes one block: receives the block's offset in the array and its shape, and
//! returns an NDArray of that shape and the array's dtype.
using BlockMaker = std::function<NDArray(std::span<const int64_t> offset, const Shape& shape)>;

//! An array whose blocks `make` builds when the graph runs. A block of the wrong
//! shape or dtype fails its task with a ChunkError naming the block.
//! @code
//!   auto a = from_blocks([](auto off, const Shape& s) { return NDArray::full(DType::int32(), s, off[0]); },
//!                        DType::int32(), {10}, 4);
//! @endcode
Array from_blocks(BlockMaker make, DType dtype, const Shape& shape, const ChunkSpec& chunks = "auto");

//! An array whose element at index (i, j, ...) is `f(index)`, as numpy's
//! `fromfunction`; the dtype is T's. `f` runs when the graph runs, once per element.
template <Element T, class F>
Array from_function(F f, const Shape& shape, const ChunkSpec& chunks = "auto") {
  BlockMaker make = [f = std::move(f)](std::span<const int64_t> offset, const Shape& s) {
    NDArray out = NDArray::empty(dtype_of<T>, s);
    T* p = out.data<T>();
    std::vector<int64_t> index(offset.size());
    for_each_index(s, [&](std::span<const int64_t> in_block) {
      for (size_t axis = 0; axis < index.size(); ++axis) index[axis] = offset[axis] + in_block[axis];
      *p++ = static_cast<T>(f(std::span<const int64_t>(index)));
    });
    return out;
  };
  return from_blocks(std::move(make), dtype_of<T>, shape, chunks);
}

//! An array over the elements of `data`, cut into `chunks`; each block is a view
//! of `data` (no copy), so `data` must not change while the array is in use.
Array from_ndarray(const NDArray& data, const ChunkSpec& chunks = "auto");

}  // namespace tessera::array
