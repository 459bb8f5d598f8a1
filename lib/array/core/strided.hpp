// Private: walking the elements of one or more strided arrays of the same shape.
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <vector>

namespace tessera::array::detail {

//! Calls `run(ptrs, count, inner_strides)` once per innermost row of K arrays of
//! `shape` with byte strides `strides[k]`, starting at `base[k]`: the row holds
//! `count` elements, element j of array k at `ptrs[k] + j * inner_strides[k]`.
//! A 0-d array is one row of one element. Nothing runs when an extent is 0.
template <size_t K, class F>
void for_each_row(const std::vector<int64_t>& shape, std::array<std::byte*, K> base,
                  std::array<const std::vector<int64_t>*, K> strides, F&& run) {
  const size_t n = shape.size();
  for (int64_t e : shape) {
    if (e == 0) return;
  }
  std::array<int64_t, K> inner{};
  if (n == 0) {
    run(base, int64_t{1}, inner);
    return;
  }
  for (size_t k = 0; k < K; ++k) inner[k] = (*strides[k])[n - 1];
  const int64_t count = shape[n - 1];
  std::vector<int64_t> index(n - 1, 0);
  std::array<std::byte*, K> ptrs = base;
  while (true) {
    run(ptrs, count, inner);
    // Odometer over the outer axes, last outer axis fastest.
    size_t axis = n - 1;
    while (axis > 0) {
      --axis;
      if (++index[axis] < shape[axis]) {
        for (size_t k = 0; k < K; ++k) ptrs[k] += (*strides[k])[axis];
        break;
      }
      for (size_t k = 0; k < K; ++k) ptrs[k] -= (*strides[k])[axis] * (shape[axis] - 1);
      index[axis] = 0;
      if (axis == 0) return;
    }
    if (n == 1) return;
  }
}

//! The same walk as `shape` with `strides`, in fewer axes: axes of extent 1
//! dropped, and each axis joined to the next where every array steps over the
//! next axis's whole extent to reach it (C-order neighbours in all K). Changes
//! nothing for_each_row visits, only how many rows it takes (one, for arrays
//! that are all contiguous in the same order). Extent-0 shapes are left alone.
template <size_t K>
void merge_axes(std::vector<int64_t>& shape, std::array<std::vector<int64_t>, K>& strides) {
  for (int64_t e : shape) {
    if (e == 0) return;
  }
  size_t kept = 0;
  for (size_t a = 0; a < shape.size(); ++a) {
    if (shape[a] == 1) continue;
    bool joins = kept > 0;
    for (size_t k = 0; k < K && joins; ++k) joins = strides[k][kept - 1] == strides[k][a] * shape[a];
    if (joins) {
      shape[kept - 1] *= shape[a];
      for (size_t k = 0; k < K; ++k) strides[k][kept - 1] = strides[k][a];
      continue;
    }
    shape[kept] = shape[a];
    for (size_t k = 0; k < K; ++k) strides[k][kept] = strides[k][a];
    ++kept;
  }
  shape.resize(kept);
  for (size_t k = 0; k < K; ++k) strides[k].resize(kept);
}

}  // namespace tessera::array::detail
