// tessera/array/core/grid.hpp — walking every index of an n-D grid.
//
// One walker serves every place that visits the cells of a grid in C order
// (last axis fastest), as numpy's `ndindex` does: the blocks of an array's
// chunks (`for_each_block` in chunks.hpp), the elements of a block, the pieces
// a rechunk copies. Walks are loops, never recursion, so any number of axes is
// fine.
//
// @code
//   std::vector<int64_t> extents{2, 3};
//   tessera::array::for_each_index(extents, [](std::span<const int64_t> i) {
//     // (0, 0), (0, 1), (0, 2), (1, 0), (1, 1), (1, 2)
//   });
// @endcode
//
// Thread-safe: a walk touches only its own index.
#pragma once

#include <cstdint>
#include <vector>

#include <span>

namespace tessera::array {

//! Calls `f(index)` for every index of a grid of `extents`, in C order: once
//! for a grid of no axes, never when an extent is 0 or less. `index` is valid
//! only during the call.
template <class F>
void for_each_index(std::span<const int64_t> extents, F&& f) {
  for (int64_t e : extents) {
    if (e <= 0) return;
  }
  std::vector<int64_t> index(extents.size(), 0);
  while (true) {
    f(std::span<const int64_t>(index));
    size_t axis = extents.size();
    while (axis > 0 && ++index[axis - 1] == extents[axis - 1]) index[--axis] = 0;
    if (axis == 0) return;
  }
}

}  // namespace tessera::array
