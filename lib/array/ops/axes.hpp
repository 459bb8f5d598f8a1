// Private helpers shared by the array operations that take axes and line up chunks.
#pragma once

#include <cstddef>
#include <cstdint>
#include <set>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::array::detail {

//! `axis` in [-ndim, ndim) as a position; Error naming the operation `what` otherwise.
inline size_t axis_index(int axis, size_t ndim, const std::string& what) {
  const int nd = static_cast<int>(ndim);
  if (axis < -nd || axis >= nd) {
    throw Error(absl::StrCat(what, ": axis ", axis, " is out of bounds for an array of ", ndim, " dimension(s)"));
  }
  return static_cast<size_t>(axis < 0 ? axis + nd : axis);
}

//! The block sizes whose boundaries are the union of every list's (each list
//! adds up to the same length): the chunks that split, and never merge, every one.
inline std::vector<int64_t> common_refinement(const std::vector<const std::vector<int64_t>*>& lists) {
  std::set<int64_t> bounds;
  for (const auto* sizes : lists) {
    int64_t at = 0;
    for (int64_t s : *sizes) bounds.insert(at += s);
  }
  std::vector<int64_t> out;
  int64_t prev = 0;
  for (int64_t b : bounds) {
    if (b > prev) out.push_back(b - prev);
    prev = b;
  }
  if (out.empty()) out.push_back(0);
  return out;
}

//! The product of `extents[from..to)`: the elements of those axes together.
inline int64_t product(const std::vector<int64_t>& extents, size_t from, size_t to) {
  int64_t p = 1;
  for (size_t k = from; k < to; ++k) p *= extents[k];
  return p;
}

}  // namespace tessera::array::detail
