// tessera/array/ops/reductions.hpp — sum, mean, min, max, var and std as tree reductions.
//
// As in dask.array, a reduction runs in three steps: each block is reduced on
// its own to a partial result (one task per block), groups of at most
// `split_every` neighbouring partials along the reduced axes are combined
// (repeatedly: a tree), and the last partial of each output block is finished
// (a mean divides by the count, a std takes the root). Partials keep the
// reduced axes at extent 1, so combining is element by element and no block is
// ever concatenated. var/std combine (count, mean, sum of squared deviations)
// with Chan's pairwise formula, which stays accurate where sum and sum of
// squares would cancel.
//
// Result dtypes are numpy's: sum of bool or a signed integer gives int64, of an
// unsigned integer uint64, of floats and complex their own dtype; mean, var and
// std of bool or integers give float64, of float32 float32; var and std of
// complex give the real dtype; min and max keep the dtype (NaN propagates; complex
// numbers compare real part first).
//
// @code
//   namespace ta = tessera::array;
//   double total = ta::sum(x).compute<double>();
//   ta::Array col_means = ta::mean(x, {.axis = {0}});
//   ta::Array s = ta::std(x, {.axis = {1}, .keepdims = true, .ddof = 1});
// @endcode
//
// Thread-safe: these functions may be called from any thread.
#pragma once

#include <vector>

#include "tessera/array/array.hpp"

namespace tessera::array {

//! What to reduce and how.
struct ReduceOptions {
  //! Axes to reduce (negative counts from the end); empty: every axis.
  std::vector<int> axis{};
  //! Keep the reduced axes with extent 1, as numpy's keepdims.
  bool keepdims = false;
  //! The most partials one combine task reads (at least 2); it is spread over the
  //! reduced axes as dask spreads an integer split_every.
  int split_every = 16;
  //! Delta degrees of freedom of var and std: the divisor is count - ddof.
  int ddof = 0;
};

//! The sum over `options.axis`. Error for an axis out of range or repeated.
Array sum(const Array& x, const ReduceOptions& options = {});
//! The arithmetic mean (NaN for no elements).
Array mean(const Array& x, const ReduceOptions& options = {});
//! The smallest element. Error when an axis reduced has no elements (numpy raises too).
Array min(const Array& x, const ReduceOptions& options = {});
//! The largest element. Error when an axis reduced has no elements.
Array max(const Array& x, const ReduceOptions& options = {});
//! The variance, dividing by count - ddof.
Array var(const Array& x, const ReduceOptions& options = {});
//! The standard deviation, the square root of var.
Array std(const Array& x, const ReduceOptions& options = {});

}  // namespace tessera::array
