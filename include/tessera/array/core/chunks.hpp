// tessera/array/core/chunks.hpp — how an n-D array is cut into blocks.
//
// `Chunks` holds, per axis, the sizes of the blocks along it, as dask.array's
// `chunks` tuple does: shape (10, 6) cut by (4, 6) is `((4, 4, 2), (6,))`. It
// also answers what the graph and the rechunk planner ask: blocks per axis,
// where each block starts, which block holds an index. `normalize_chunks` turns
// what a user writes — one size for every axis, a size per axis, explicit
// sizes, -1 or none for a whole axis, "auto" under a byte limit, a map from
// axis to any of these — into Chunks, and raises ChunkError saying what it
// expected and what it found.
//
// @code
//   using namespace tessera::array;
//   Chunks c = normalize_chunks({4, -1}, {10, 6});        // ((4, 4, 2), (6,))
//   c[0];                                                 // {4, 4, 2}
//   c.numblocks(0);                                       // 3
//   c.offsets(0);                                         // {0, 4, 8, 10}
//   normalize_chunks("auto", {100000, 100000}, DType::float64());  // ~128 MiB blocks
//   normalize_chunks({{5, 5}, {3}}, {10, 4});             // ChunkError: axis 1 adds up to 3, expected 4
// @endcode
//
// Thread-safe: Chunks is an immutable value once built.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/grid.hpp"

namespace tessera::array {

//! Extents of an n-D array, one per axis (numpy's `shape`).
using Shape = std::vector<int64_t>;

//! 128 MiB: the default byte limit for "auto" chunks (dask's `array.chunk-size`).
inline constexpr int64_t kDefaultChunkBytes = int64_t{128} << 20;

//! Block sizes along each axis of an array, as dask's chunk tuples: `chunks[axis][block]`.
class Chunks {
 public:
  //! No axes (the chunks of a 0-d array: one block).
  Chunks() = default;
  //! Explicit sizes per axis. Throws ChunkError for an axis with no sizes, a
  //! negative size, or a zero size in an axis that has more than one block
  //! (an axis of length 0 is `{0}`).
  explicit Chunks(std::vector<std::vector<int64_t>> sizes);

  //! Number of axes.
  size_t ndim() const { return sizes_.size(); }
  //! Block sizes along `axis`.
  const std::vector<int64_t>& operator[](size_t axis) const { return sizes_[axis]; }
  //! All sizes, axis by axis.
  const std::vector<std::vector<int64_t>>& sizes() const { return sizes_; }
  //! The array's shape: the sum of each axis's sizes.
  Shape shape() const;
  //! Blocks along `axis`.
  int64_t numblocks(size_t axis) const { return static_cast<int64_t>(sizes_[axis].size()); }
  //! Blocks along every axis.
  std::vector<int64_t> numblocks() const;
  //! The number of blocks in all (1 for a 0-d array).
  int64_t total_blocks() const;
  //! Boundaries along `axis`: `numblocks(axis) + 1` values, 0 first, the length last;
  //! block i covers [offsets(axis)[i], offsets(axis)[i+1]).
  const std::vector<int64_t>& offsets(size_t axis) const { return offsets_[axis]; }
  //! The index of the block along `axis` that holds element `index` (0 <= index < length).
  int64_t block_of(size_t axis, int64_t index) const;
  //! Where block `block` (one index per axis) starts.
  Shape block_offset(const std::vector<int64_t>& block) const;
  //! The shape of block `block`.
  Shape block_shape(const std::vector<int64_t>& block) const;
  //! The largest block's size along each axis.
  Shape max_block_shape() const;
  //! Printed as dask prints chunks: `((4, 4, 2), (6,))`.
  std::string str() const;

  //! Same block sizes on every axis.
  friend bool operator==(const Chunks& a, const Chunks& b) { return a.sizes_ == b.sizes_; }

 private:
  std::vector<std::vector<int64_t>> sizes_;
  std::vector<std::vector<int64_t>> offsets_;
};

//! Calls `f(block index)` for every block of `chunks`, in C order of the block
//! grid (see for_each_index).
//! @code
//!   for_each_block(x.chunks(), [&](std::span<const int64_t> b) { keys.push_back(x.block_key(b)); });
//! @endcode
template <class F>
void for_each_block(const Chunks& chunks, F&& f) {
  const std::vector<int64_t> numblocks = chunks.numblocks();
  for_each_index(numblocks, std::forward<F>(f));
}

//! The block shape of regular chunks, the form a zarr store keeps: each axis's
//! first block (1 for an axis of length 0). Throws ChunkError unless every
//! axis has equal blocks but a smaller last one.
//! @code
//!   regular_chunk_shape(Chunks({{4, 4, 2}, {6}}));   // {4, 6}
//!   regular_chunk_shape(Chunks({{2, 4}}));           // ChunkError: rechunk first
//! @endcode
Shape regular_chunk_shape(const Chunks& chunks);

//! What one axis's chunks are to be: a block size (`-1` for the whole axis),
//! `std::nullopt` (the whole axis), "auto", or explicit sizes (`{5, 5, 2}`).
class AxisChunks {
 public:
  //! What the axis asks for: one block size, the whole axis, "auto" sizes or explicit sizes.
  enum class Kind { Size, Whole, Auto, Explicit };
  //! Converting constructors: a block size (-1: the whole axis), std::nullopt (the whole axis), "auto" (other text
  //! throws ChunkError), explicit sizes.
  //! @{
  AxisChunks(int64_t size);                          // NOLINT: size, -1 = whole axis
  AxisChunks(int size) : AxisChunks(int64_t{size}) {}  // NOLINT
  AxisChunks(std::nullopt_t);                        // NOLINT: whole axis
  AxisChunks(const char* text);                      // NOLINT: "auto"; other text throws ChunkError
  AxisChunks(const std::string& text);               // NOLINT: "auto"
  AxisChunks(std::vector<int64_t> sizes);            // NOLINT: explicit sizes
  AxisChunks(std::initializer_list<int64_t> sizes) : AxisChunks(std::vector<int64_t>(sizes)) {}  // NOLINT
  //! @}

  //! Which kind of request this is.
  Kind kind() const { return kind_; }
  //! The block size, for Kind::Size.
  int64_t size() const { return size_; }
  //! The explicit sizes, for Kind::Explicit.
  const std::vector<int64_t>& sizes() const { return sizes_; }

 private:
  Kind kind_ = Kind::Whole;
  int64_t size_ = -1;
  std::vector<int64_t> sizes_;
};

//! A chunk specification as users write it (see normalize_chunks).
class ChunkSpec {
 public:
  //! The same block size along every axis (-1: whole axes).
  ChunkSpec(int64_t size_for_all);  // NOLINT
  //! One block size for every axis.
  ChunkSpec(int size_for_all) : ChunkSpec(int64_t{size_for_all}) {}  // NOLINT
  //! "auto" for every axis, or a byte limit for auto chunks such as "64 MiB"
  //! (other text throws ChunkError).
  ChunkSpec(const char* text);          // NOLINT
  //! Text as dask takes it: "auto", "128MiB", or a number.
  ChunkSpec(const std::string& text);   // NOLINT
  //! One entry per axis.
  ChunkSpec(std::initializer_list<AxisChunks> axes);  // NOLINT
  //! One entry per axis.
  ChunkSpec(std::vector<AxisChunks> axes);            // NOLINT
  //! Explicit sizes per axis.
  ChunkSpec(const std::vector<std::vector<int64_t>>& sizes);  // NOLINT
  //! Chunks already made; checked against the shape.
  ChunkSpec(const Chunks& chunks);  // NOLINT
  //! Axis -> spec; axes not named take their whole length.
  ChunkSpec(std::map<size_t, AxisChunks> by_axis);  // NOLINT

 private:
  friend Chunks normalize_chunks(const ChunkSpec&, const Shape&, std::optional<DType>, int64_t);
  enum class Form { All, PerAxis, ByAxis, Limit };
  Form form_ = Form::All;
  std::vector<AxisChunks> axes_;           // All: one entry; PerAxis: one per axis
  std::map<size_t, AxisChunks> by_axis_;   // ByAxis
  int64_t limit_ = -1;                     // Limit: bytes from text such as "64 MiB"
};

//! Turns a chunk specification into Chunks for an array of `shape`.
//! - a size s > 0 gives blocks of s along the axis and a smaller last one; a size
//!   larger than the axis gives one block; -1 or std::nullopt the whole axis;
//! - explicit sizes must be positive and add up to the axis's length;
//! - "auto" axes share one block size chosen so a block holds at most
//!   `limit_bytes` bytes of `dtype` (an axis shorter than that size is taken
//!   whole), counting the largest blocks of the axes that are not auto;
//! - an axis of length 0 gets the chunks `(0,)`.
//! Throws ChunkError for the wrong number of axes, sizes that do not add up,
//! empty explicit sizes, zero or negative sizes (other than -1), text other than
//! "auto" or a byte size, or "auto" without a dtype.
//! @code
//!   normalize_chunks({256, -1}, {1000, 50});   // ((256, 256, 256, 232), (50,))
//!   normalize_chunks(std::map<size_t, AxisChunks>{{1, 10}}, {4, 25});  // ((4,), (10, 10, 5))
//! @endcode
Chunks normalize_chunks(const ChunkSpec& spec, const Shape& shape,
                        std::optional<DType> dtype = std::nullopt,
                        int64_t limit_bytes = kDefaultChunkBytes);

//! Parses a byte size as dask writes them: "128 MiB", "1.5GB", "4096", "100 kB".
//! Throws ChunkError for anything else.
int64_t parse_bytes(std::string_view text);

//! Prints a shape as numpy does: `(3, 4)`, `(5,)`, `()`.
std::string shape_str(const Shape& shape);

}  // namespace tessera::array
