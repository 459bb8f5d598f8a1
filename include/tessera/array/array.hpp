// tessera/array/array.hpp — a lazy chunked n-D array, as dask.array's Array.
//
// An Array is a name, Chunks, a DType and the task graph that produces its
// blocks: block (i, j, ...) is the value of the key `(name, i, j, ...)`, an
// NDArray. Nothing runs until `compute()`; every operation (creation.hpp,
// elementwise.hpp, reductions.hpp, slicing.hpp, map_blocks.hpp, store.hpp)
// returns a new Array whose graph adds one layer of tasks over its inputs'.
//
// The graph is kept in layers, one per operation, shared between the Arrays
// built on them (dask's HighLevelGraph, without its optimizations): building a
// long expression never copies earlier layers, and `graph()` merges the layers
// an array needs into one Graph, culled to the tasks its blocks depend on.
// Names are deterministic tokens (`sum-3f2a...`) made from an operation's
// inputs and parameters, so the same expression built twice shares its layers.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array x = ta::from_npy("big.npy", {4096, -1});   // nothing read yet
//   ta::Array y = (x - 1.0) * 2.0;                       // element-wise, lazy
//   ta::NDArray z = y.compute({.num_workers = 2});       // one array in memory
//   double total = ta::sum(x).compute<double>();         // a tree reduction
// @endcode
//
// Thread-safe: an Array is immutable; copies are cheap (shared state).
#pragma once

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include <span>

#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/core/scalar.hpp"
#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/graph/token.hpp"
#include "tessera/scheduler/options.hpp"

namespace tessera::array {

//! Writes block `index` of an input array into `destination` (a writable view
//! of the block's shape, any strides): the values its task would make.
using BlockFill = std::function<void(std::span<const int64_t> index, const NDArray& destination)>;

//! One operation's tasks: the graph fragment an Array adds over its inputs.
struct Layer {
  //! The layer's name: the key name of its blocks.
  std::string name;
  //! The tasks that make the blocks (and whatever they read that no other layer holds).
  Graph graph;
  //! Set by readers (from_zarr): `compute()` and `store` into memory call it to
  //! write each block straight into its place, with no block made and copied.
  BlockFill fill = {};
};

//! How `compute` and `store` run the graph: tessera's `get` options
//! (`num_workers`, callbacks, ...).
using ComputeOptions = tessera::GetOptions;

//! A lazy chunked n-D array: a name, chunks, a dtype and the layers of tasks that make its blocks.
class Array {
 public:
  //! An array of the blocks `(name, i, j, ...)` computed by `layer`, whose tasks
  //! may refer to the blocks (and other keys) of `inputs`. Throws ChunkError when
  //! `layer` lacks a block key of `chunks`.
  //! @code
  //!   tessera::Graph layer;
  //!   layer.task(tessera::Key("double-x", {0}), twice, tessera::ref("x", {0}));
  //!   Array y("double-x", x.chunks(), x.dtype(), std::move(layer), {x});
  //! @endcode
  Array(std::string name, Chunks chunks, DType dtype, Graph layer, std::vector<Array> inputs = {});
  //! An input array (no inputs) whose blocks `fill` can also write straight into
  //! place (see Layer::fill).
  Array(std::string name, Chunks chunks, DType dtype, Graph layer, BlockFill fill);

  //! The name shared by the block keys.
  const std::string& name() const;
  //! Block sizes along each axis.
  const Chunks& chunks() const;
  //! The element type.
  DType dtype() const;
  //! The whole array's shape.
  Shape shape() const { return chunks().shape(); }
  //! Number of axes.
  size_t ndim() const { return chunks().ndim(); }
  //! Number of elements.
  int64_t size() const;
  //! Bytes of the whole array once computed.
  int64_t nbytes() const { return size() * static_cast<int64_t>(dtype().itemsize()); }
  //! Blocks along each axis.
  std::vector<int64_t> numblocks() const { return chunks().numblocks(); }

  //! The key of block `index` (one index per axis): `(name, i, j, ...)`.
  Key block_key(std::span<const int64_t> index) const { return Key(name(), index); }
  //! The same, for a braced list: `x.block_key({0, 1})`.
  Key block_key(std::initializer_list<int64_t> index) const { return Key(name(), index); }
  //! Every block key, in C order of the block grid.
  std::vector<Key> keys() const;

  //! The layers this array's graph is made of, inputs first.
  const std::vector<std::shared_ptr<const Layer>>& layers() const;
  //! One graph holding every task this array's blocks need, and no other.
  Graph graph() const;

  //! Runs the graph with tessera's `get` and assembles the blocks into one
  //! contiguous C-order NDArray of `shape()` (for a single block, that block).
  //! Throws TaskError when a task fails. With options.communicator the blocks
  //! are computed across the ranks (tessera/scheduler/options.hpp) and the
  //! array is assembled on rank 0 (on every rank with result_on_every_rank);
  //! the other ranks get an NDArray without value (has_value() is false).
  NDArray compute(const ComputeOptions& options = {}) const;

  //! The value of a one-element array (e.g. `sum(x)`) as T. Throws TypeError
  //! when the array does not hold exactly one element, or when T cannot hold the
  //! value (see Scalar::to).
  //! @code
  //!   double s = tessera::array::sum(x).compute<double>();
  //! @endcode
  template <Element T>
  T compute(const ComputeOptions& options = {}) const {
    return compute_scalar(options).to<T>();
  }

 private:
  struct State;  // array.cpp: name, chunks, dtype, layers and an index of them by key name
  Scalar compute_scalar(const ComputeOptions& options) const;
  Array(Chunks chunks, DType dtype, Layer layer, std::vector<Array> inputs);
  std::shared_ptr<const State> state_;
};

// The names of array layers are tessera::token()s (graph/token.hpp); these keep
// the spelling tessera::array::token() working.
using tessera::seed_unique_tokens;
using tessera::token;
using tessera::unique_token;

}  // namespace tessera::array
