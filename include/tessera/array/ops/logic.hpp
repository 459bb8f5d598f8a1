// tessera/array/ops/logic.hpp — comparisons, `where`, `isnan`, `any`, `all`,
// argmax/argmin, and the NaN-skipping sum, mean, min and max.
//
// Comparisons give bool arrays, element by element with numpy's broadcasting
// (broadcast.hpp); operands are compared in their promoted dtype, complex
// numbers by real part first, as numpy orders them. `where(cond, a, b)` takes a
// from a where cond is true (nonzero), b elsewhere, all three broadcast. `any`,
// `all`, `nansum`, `nanmean`, `nanmin` and `nanmax` are built from these and the tree reductions
// (reductions.hpp), so they take the same ReduceOptions.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array m = ta::greater(x, 0.5);               // or x > 0.5
//   ta::Array y = ta::where(m, x, ta::zeros(x.shape(), x.chunks()));
//   bool some = ta::any(ta::isnan(x)).compute<bool>();
//   ta::Array s = ta::nansum(x, {.axis = {0}});
//   ta::Array i = ta::argmax(x, {.axis = {1}});      // int64, one per row
// @endcode
//
// Thread-safe: these functions only build graphs.
#pragma once

#include "tessera/array/array.hpp"
#include "tessera/array/core/scalar.hpp"
#include "tessera/array/ops/reductions.hpp"

namespace tessera::array {

//! The six comparisons.
enum class CompareOp { equal, not_equal, less, less_equal, greater, greater_equal };

//! `a op b` as a bool array (broadcast). ChunkError when the shapes do not broadcast.
Array compare(CompareOp op, const Array& a, const Array& b);
//! `a op s` against one value, in a's dtype when it holds s (numpy's value-based
//! casting: float32 data against 0.1 compares with float32(0.1)), else in the promotion.
Array compare(CompareOp op, const Array& a, const Scalar& s);

inline Array equal(const Array& a, const Array& b) { return compare(CompareOp::equal, a, b); }
inline Array not_equal(const Array& a, const Array& b) { return compare(CompareOp::not_equal, a, b); }
inline Array less(const Array& a, const Array& b) { return compare(CompareOp::less, a, b); }
inline Array less_equal(const Array& a, const Array& b) { return compare(CompareOp::less_equal, a, b); }
inline Array greater(const Array& a, const Array& b) { return compare(CompareOp::greater, a, b); }
inline Array greater_equal(const Array& a, const Array& b) { return compare(CompareOp::greater_equal, a, b); }
inline Array equal(const Array& a, const Scalar& s) { return compare(CompareOp::equal, a, s); }
inline Array not_equal(const Array& a, const Scalar& s) { return compare(CompareOp::not_equal, a, s); }
inline Array less(const Array& a, const Scalar& s) { return compare(CompareOp::less, a, s); }
inline Array less_equal(const Array& a, const Scalar& s) { return compare(CompareOp::less_equal, a, s); }
inline Array greater(const Array& a, const Scalar& s) { return compare(CompareOp::greater, a, s); }
inline Array greater_equal(const Array& a, const Scalar& s) { return compare(CompareOp::greater_equal, a, s); }

inline Array operator<(const Array& a, const Array& b) { return less(a, b); }
inline Array operator<=(const Array& a, const Array& b) { return less_equal(a, b); }
inline Array operator>(const Array& a, const Array& b) { return greater(a, b); }
inline Array operator>=(const Array& a, const Array& b) { return greater_equal(a, b); }
inline Array operator<(const Array& a, const Scalar& s) { return less(a, s); }
inline Array operator<=(const Array& a, const Scalar& s) { return less_equal(a, s); }
inline Array operator>(const Array& a, const Scalar& s) { return greater(a, s); }
inline Array operator>=(const Array& a, const Scalar& s) { return greater_equal(a, s); }

//! Elements of `a` where `cond` is true (nonzero), of `b` elsewhere; the dtype is
//! their promotion. ChunkError when the three shapes do not broadcast.
Array where(const Array& cond, const Array& a, const Array& b);
//! True where an element is NaN (a complex one: either part); false for integers and bools.
Array isnan(const Array& x);
//! Whether any element over the axes is nonzero (false for none).
Array any(const Array& x, const ReduceOptions& options = {});
//! Whether every element over the axes is nonzero (true for none).
Array all(const Array& x, const ReduceOptions& options = {});
//! The position of the largest element, as int64 (the first one on ties; the
//! first NaN when there is one, as numpy). With one axis in `options.axis`, the
//! position along it, the axis removed; with none, the position in the C-order
//! flattened array as a 0-d array (numpy's `argmax(a)`). `keepdims` keeps the
//! reduced axes with extent 1. Partial results (value, position) per block are
//! combined by a tree of `split_every`. Error for more than one axis, an axis out
//! of range or of length 0, or an array without elements.
//! @code
//!   ta::Array i = ta::argmax(x, {.axis = {1}});   // one int64 per row
//!   ta::Array j = ta::argmax(x);                  // 0-d: the flattened position
//! @endcode
Array argmax(const Array& x, const ReduceOptions& options = {});
//! The position of the smallest element (see argmax).
Array argmin(const Array& x, const ReduceOptions& options = {});
//! The sum with NaNs counted as zero.
Array nansum(const Array& x, const ReduceOptions& options = {});
//! The largest element that is not NaN (NaN where there are none, as numpy
//! gives with a warning); max for integers and bools.
Array nanmax(const Array& x, const ReduceOptions& options = {});
//! The smallest element that is not NaN (see nanmax).
Array nanmin(const Array& x, const ReduceOptions& options = {});
//! The mean of the elements that are not NaN (NaN where there are none).
Array nanmean(const Array& x, const ReduceOptions& options = {});

}  // namespace tessera::array
