// Comparisons, where and isnan as broadcast block tasks; any, all, nansum and
// nanmean composed from them and the tree reductions.
#include "tessera/array/ops/logic.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <functional>
#include <limits>
#include <memory>
#include <numeric>
#include <string>
#include <type_traits>

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "array/ops/axes.hpp"
#include "array/ops/element.hpp"
#include "array/ops/flat.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/array/ops/broadcast.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {
namespace {

const char* compare_name(CompareOp op) {
  switch (op) {
    case CompareOp::equal: return "equal";
    case CompareOp::not_equal: return "not_equal";
    case CompareOp::less: return "less";
    case CompareOp::less_equal: return "less_equal";
    case CompareOp::greater: return "greater";
    case CompareOp::greater_equal: break;
  }
  return "greater_equal";
}

// numpy's order: complex numbers by real part, then imaginary part (NaN compares false).
template <class T>
bool less_than(const T& a, const T& b) {
  if constexpr (requires { a.imag(); }) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    return a < b;
  }
}

template <class T>
bool apply(CompareOp op, const T& a, const T& b) {
  if constexpr (!requires { a.imag(); }) {
    // Real numbers: C++'s operators are IEEE's, which are numpy's (NaN: only != holds).
    switch (op) {
      case CompareOp::equal: return a == b;
      case CompareOp::not_equal: return a != b;
      case CompareOp::less: return a < b;
      case CompareOp::less_equal: return a <= b;
      case CompareOp::greater: return a > b;
      case CompareOp::greater_equal: break;
    }
    return a >= b;
  }
  if (detail::is_nan(a) || detail::is_nan(b)) return op == CompareOp::not_equal;
  switch (op) {
    case CompareOp::equal: return a == b;
    case CompareOp::not_equal: return !(a == b);
    case CompareOp::less: return less_than(a, b);
    case CompareOp::less_equal: return !less_than(b, a);
    case CompareOp::greater: return less_than(b, a);
    case CompareOp::greater_equal: break;
  }
  return !less_than(a, b);
}

// `x op y` of two rank-1 Eigen expressions of T: real numbers take Eigen's
// comparisons (IEEE's, which are numpy's; vectorized), complex numbers go
// through apply<T> for numpy's order and NaN rule.
template <CompareOp Op, class T, class X, class Y>
auto compare_expr(const X& x, const Y& y) {
  if constexpr (std::is_arithmetic_v<T>) {
    // Called as members: C++20's reversed candidates make `x == y` ambiguous for clang.
    if constexpr (Op == CompareOp::equal) return x.operator==(y);
    if constexpr (Op == CompareOp::not_equal) return x.operator!=(y);
    if constexpr (Op == CompareOp::less) return x < y;
    if constexpr (Op == CompareOp::less_equal) return x <= y;
    if constexpr (Op == CompareOp::greater) return x > y;
    if constexpr (Op == CompareOp::greater_equal) return x >= y;
  } else {
    return x.binaryExpr(y, [](const T& a, const T& b) { return apply<T>(Op, a, b); });
  }
}

NDArray compare_blocks(CompareOp op, DType dtype, const NDArray& a, const NDArray& b) {
  NDArray out = NDArray::empty(DType::bool_(), a.shape());
  TensorMap<bool, 1> o(out.data<bool>(), out.size());
  dispatch(dtype, [&]<class T>() {
    const detail::Flat<T> fa = detail::flat<T>(a, dtype), fb = detail::flat<T>(b, dtype);
    auto run = [&]<CompareOp Op>() {
      detail::as_expressions(out.size(), [&](const auto& x, const auto& y) { o = compare_expr<Op, T>(x, y); }, fa, fb);
    };
    switch (op) {
      case CompareOp::equal: return run.template operator()<CompareOp::equal>();
      case CompareOp::not_equal: return run.template operator()<CompareOp::not_equal>();
      case CompareOp::less: return run.template operator()<CompareOp::less>();
      case CompareOp::less_equal: return run.template operator()<CompareOp::less_equal>();
      case CompareOp::greater: return run.template operator()<CompareOp::greater>();
      case CompareOp::greater_equal: return run.template operator()<CompareOp::greater_equal>();
    }
  });
  return out;
}

NDArray where_blocks(DType dtype, const NDArray& cond, const NDArray& a, const NDArray& b) {
  NDArray out = NDArray::empty(dtype, cond.shape());
  const detail::Flat<bool> m = detail::flat<bool>(cond, DType::bool_());
  dispatch(dtype, [&]<class T>() {
    TensorMap<T, 1> o(out.data<T>(), out.size());
    detail::as_expressions(out.size(), [&](const auto& c, const auto& x, const auto& y) { o = c.select(x, y); }, m,
                           detail::flat<T>(a, dtype), detail::flat<T>(b, dtype));
  });
  return out;
}

// A one-element array of `s` (in its own dtype), to broadcast against an Array.
Array scalar_array(const Scalar& s) { return from_ndarray(NDArray::full(s.dtype(), {}, s)); }

// argmin/argmax partials: the best value and its position along the axis, per
// line (the axis kept with extent 1).
struct ArgPartial {
  NDArray value, index;
  size_t nbytes() const { return value.nbytes() + index.nbytes(); }
};

// Whether `b` beats `a` (a comes first, so ties keep a): NaN beats everything
// else, as numpy's argmax and argmin both return the first NaN.
template <class T>
bool beats(bool max, const T& b, const T& a) {
  if (detail::is_nan(a)) return false;
  if (detail::is_nan(b)) return true;
  return max ? less_than(a, b) : less_than(b, a);
}

// The best of `outer` contiguous lines of m >= 1 real numbers, and its position
// (from `offset`), as Eigen's argmax or argmin along the lines (bench/algebra's
// argmax_axis1 rows time it beside the element-by-element loop), which keeps the
// first of equal values as numpy does. False, with nothing written, when the
// lines may hold a NaN: numpy's answer is then the first NaN, which Eigen's
// reduction does not know.
template <class T>
bool arg_lines(bool max, const T* x, int64_t outer, int64_t m, int64_t offset, T* best, int64_t* idx) {
  const TensorMap<const T, 2> lines(x, outer, m);
  if constexpr (std::is_floating_point_v<T>) {
    // A NaN anywhere makes the sum NaN (so does inf - inf: the loop then, which is right too).
    const Eigen::Tensor<T, 0, Eigen::RowMajor> total = lines.sum();
    if (std::isnan(total())) return false;
  }
  Eigen::Tensor<Eigen::Index, 1, Eigen::RowMajor> at;
  if (max) {
    at = lines.argmax(1);
  } else {
    at = lines.argmin(1);
  }
  for (int64_t o = 0; o < outer; ++o) {
    best[o] = lines(o, at(o));
    idx[o] = offset + at(o);
  }
  return true;
}

// The best of each line of a block along `axis`; positions start at `offset`.
ArgPartial arg_block(bool max, const NDArray& block, size_t axis, int64_t offset) {
  const NDArray b = block.is_c_contiguous() ? block : block.copy();
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= b.shape()[k];
  for (size_t k = axis + 1; k < b.ndim(); ++k) inner *= b.shape()[k];
  const int64_t m = b.shape()[axis];
  Shape shape = b.shape();
  shape[axis] = 1;
  ArgPartial r{NDArray::empty(b.dtype(), shape), NDArray::empty(DType::int64(), shape)};
  int64_t* idx = r.index.data<int64_t>();
  // Line by line along the axis, each line of `inner` elements against the best
  // so far: memory is read in order (walking each column down the axis instead
  // reads a line's stride apart, one cache line per element).
  dispatch(b.dtype(), [&]<class T>() {
    const T* x = b.data<const T>();
    T* best = r.value.data<T>();
    if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
      // Along the last axis: contiguous lines, Eigen's arg reduction unless there is a NaN.
      if (inner == 1 && arg_lines<T>(max, x, outer, m, offset, best, idx)) return;
    }
    for (int64_t o = 0; o < outer; ++o) {
      const T* lines = x + o * m * inner;
      T* bv = best + o * inner;
      int64_t* bi = idx + o * inner;
      std::copy(lines, lines + inner, bv);
      std::fill(bi, bi + inner, offset);
      for (int64_t i = 1; i < m; ++i) {
        const T* line = lines + i * inner;
        for (int64_t j = 0; j < inner; ++j) {
          if (beats(max, line[j], bv[j])) {
            bv[j] = line[j];
            bi[j] = offset + i;
          }
        }
      }
    }
  });
  return r;
}

// The best element of a whole block and its position in the C-order flattened
// array of `shape`, as 0-d partials; the block starts at `start`. The block's
// own C order is the flattened order, so its first best is the one to keep.
ArgPartial arg_block_flat(bool max, const NDArray& block, const std::vector<int64_t>& start, const Shape& shape) {
  const NDArray b = block.is_c_contiguous() ? block : block.copy();
  ArgPartial r{NDArray::empty(b.dtype(), {}), NDArray::empty(DType::int64(), {})};
  int64_t at = 0;
  dispatch(b.dtype(), [&]<class T>() {
    const T* x = b.data<const T>();
    for (int64_t i = 1; i < b.size(); ++i) {
      if (beats(max, x[i], x[at])) at = i;
    }
    *r.value.data<T>() = x[at];
  });
  int64_t flat = 0;
  for (size_t k = b.ndim(); k-- > 0;) {  // `at` unravelled in the block, then ravelled in the array
    const int64_t extent = b.shape()[k];
    flat += (start[k] + at % extent) * std::accumulate(shape.begin() + static_cast<long>(k) + 1, shape.end(),
                                                       int64_t{1}, std::multiplies<>());
    at /= extent;
  }
  *r.index.data<int64_t>() = flat;
  return r;
}

// Combines partials element by element; on a tie (equal values, or two NaNs)
// the smaller position wins, so the first occurrence is kept in any order.
ArgPartial arg_combine(bool max, const std::vector<ArgPartial>& parts) {
  ArgPartial r{parts.front().value.copy(), parts.front().index.copy()};
  int64_t* idx = r.index.data<int64_t>();
  dispatch(r.value.dtype(), [&]<class T>() {
    T* best = r.value.data<T>();
    for (size_t p = 1; p < parts.size(); ++p) {
      const T* v = parts[p].value.data<const T>();
      const int64_t* i = parts[p].index.data<const int64_t>();
      for (int64_t e = 0; e < r.value.size(); ++e) {
        if (beats(max, v[e], best[e]) || (i[e] < idx[e] && !beats(max, best[e], v[e]))) {
          best[e] = v[e];
          idx[e] = i[e];
        }
      }
    }
  });
  return r;
}

// Combines the partials of `level` by a tree of `split_every` into `layer`;
// the keys are `part`-<depth> with `prefix` and a running number. Returns the root.
Key combine_tree(bool max, Graph& layer, std::vector<Key> level, const std::string& part,
                 std::span<const int64_t> prefix, int split_every, const std::string& name) {
  auto f_combine = [max](const std::vector<ArgPartial>& p) { return arg_combine(max, p); };
  for (int depth = 1; level.size() > 1; ++depth) {
    std::vector<Key> next;
    for (size_t i = 0; i < level.size(); i += static_cast<size_t>(split_every)) {
      ArgList args;
      for (size_t p = i; p < std::min(level.size(), i + static_cast<size_t>(split_every)); ++p) {
        args.items.emplace_back(ref(level[p]));
      }
      std::vector<int64_t> key(prefix.begin(), prefix.end());
      key.push_back(static_cast<int64_t>(next.size()));
      next.emplace_back(absl::StrCat(part, "-", depth), key);
      layer.put(next.back(), Task(fn(name + "-combine", f_combine), std::move(args)));
    }
    level = std::move(next);
  }
  return level.front();
}

Array arg_reduce_axis(bool max, const Array& x, int axis_arg, int split_every) {
  const std::string name = max ? "argmax" : "argmin";
  if (x.ndim() == 0) throw Error(absl::StrCat(name, ": needs an array of at least one dimension, found a 0-d array"));
  const size_t axis = detail::axis_index(axis_arg, x.ndim(), name);
  if (x.shape()[axis] == 0) {
    throw Error(absl::StrCat(name, ": axis ", axis, " has no elements (shape ", shape_str(x.shape()), ")"));
  }
  if (split_every < 2) throw Error(absl::StrCat(name, ": split_every must be at least 2, found ", split_every));
  std::vector<std::vector<int64_t>> sizes = x.chunks().sizes();
  sizes.erase(sizes.begin() + static_cast<long>(axis));
  const Chunks chunks(std::move(sizes));
  const std::string tok = token({name, x.name(), std::to_string(axis), std::to_string(split_every)});
  const std::string out = absl::StrCat(name, "-", tok), part = absl::StrCat(name, "-partial-", tok);
  const auto& offsets = x.chunks().offsets(axis);
  auto f_index = [axis](const ArgPartial& p) {
    std::vector<Slice> s(p.index.ndim());
    s[axis] = Slice::index(0);
    return p.index.slice(s);
  };
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    std::vector<Key> level;
    for (int64_t j = 0; j < x.numblocks()[axis]; ++j) {
      std::vector<int64_t> in(idx.begin(), idx.end());
      in.insert(in.begin() + static_cast<long>(axis), j);
      auto f = [max, axis, offset = offsets[j]](const NDArray& b) { return arg_block(max, b, axis, offset); };
      level.emplace_back(absl::StrCat(part, "-0"), in);
      layer.put(level.back(), Task(fn(name, f), ref(x.block_key(in))));
    }
    layer.put(Key(out, idx), Task(fn(name + "-index", f_index), ref(combine_tree(max, layer, level, part, idx,
                                                                                split_every, name))));
  });
  return Array(out, chunks, DType::int64(), std::move(layer), {x});
}

// argmax/argmin of the flattened array: one partial per block, then the tree.
Array arg_reduce_flat(bool max, const Array& x, int split_every) {
  const std::string name = max ? "argmax" : "argmin";
  if (x.size() == 0) throw Error(absl::StrCat(name, ": the array has no elements (shape ", shape_str(x.shape()), ")"));
  if (split_every < 2) throw Error(absl::StrCat(name, ": split_every must be at least 2, found ", split_every));
  const std::string tok = token({name, x.name(), "flat", std::to_string(split_every)});
  const std::string out = absl::StrCat(name, "-", tok), part = absl::StrCat(name, "-partial-", tok);
  Graph layer;
  std::vector<Key> level;
  for_each_block(x.chunks(), [&](std::span<const int64_t> idx) {
    std::vector<int64_t> start(idx.size());
    for (size_t k = 0; k < idx.size(); ++k) start[k] = x.chunks().offsets(k)[static_cast<size_t>(idx[k])];
    auto f = [max, start = std::move(start), shape = x.shape()](const NDArray& b) {
      return arg_block_flat(max, b, start, shape);
    };
    level.emplace_back(absl::StrCat(part, "-0"), std::vector<int64_t>{static_cast<int64_t>(level.size())});
    layer.put(level.back(), Task(fn(name, f), ref(x.block_key(std::vector<int64_t>(idx.begin(), idx.end())))));
  });
  auto f_index = [](const ArgPartial& p) { return p.index; };
  layer.put(Key(out, std::vector<int64_t>{}),
            Task(fn(name + "-index", f_index), ref(combine_tree(max, layer, level, part, {}, split_every, name))));
  return Array(out, Chunks(std::vector<std::vector<int64_t>>{}), DType::int64(), std::move(layer), {x});
}

}  // namespace

Array compare(CompareOp op, const Array& a, const Array& b) {
  const DType dtype = promote_types(a.dtype(), b.dtype());
  return blockwise_broadcast(compare_name(op), "", {a, b}, DType::bool_(), [op, dtype](std::span<const NDArray> x) {
    return compare_blocks(op, dtype, x[0], x[1]);
  });
}

namespace {

// The dtype a comparison of an `array` with `s` runs in, as numpy 1.x's
// value-based casting picks it: the array's own dtype when it is of the
// scalar's kind or a higher one and holds the value (so float32 data is
// compared as float32, with no float64 copy of every block); the promotion
// otherwise (an int8 array against 1000 is compared in int64, never wrapped).
DType scalar_compare_dtype(DType array, const Scalar& s) {
  const DType sd = s.dtype();
  const bool kind_fits = sd.kind() == 'b' || (sd.is_integer() && array.kind() != 'b') ||
                         (sd.is_floating() && (array.is_floating() || array.is_complex())) || array.is_complex();
  if (!kind_fits) return promote_types(array, sd);
  try {
    dispatch(array, [&]<class T>() {
      const T v = s.to<T>();  // TypeError for an integer out of range
      if constexpr (is_floating_v<T>) {
        // 1e300 is no float32 (it would become inf and equal an inf element).
        if (std::isinf(v) && !std::isinf(s.to<double>())) throw TypeError("out of range");
      }
    });
  } catch (const TypeError&) {
    return promote_types(array, sd);
  }
  return array;
}

}  // namespace

Array compare(CompareOp op, const Array& a, const Scalar& s) {
  const DType dtype = scalar_compare_dtype(a.dtype(), s);
  return compare(op, a, from_ndarray(NDArray::full(dtype, {}, s)));
}

Array where(const Array& cond, const Array& a, const Array& b) {
  const DType dtype = promote_types(a.dtype(), b.dtype());
  return blockwise_broadcast("where", "", {cond, a, b}, dtype, [dtype](std::span<const NDArray> x) {
    return where_blocks(dtype, x[0], x[1], x[2]);
  });
}

Array isnan(const Array& x) {
  return blockwise_broadcast("isnan", "", {x}, DType::bool_(), [](std::span<const NDArray> b) {
    NDArray out = NDArray::empty(DType::bool_(), b[0].shape());
    TensorMap<bool, 1> o(out.data<bool>(), out.size());
    dispatch(b[0].dtype(), [&]<class T>() {
      detail::as_expressions(
          out.size(), [&](const auto& v) { o = v.unaryExpr([](const T& e) { return detail::is_nan(e); }); },
          detail::flat<T>(b[0], b[0].dtype()));
    });
    return out;
  });
}

Array any(const Array& x, const ReduceOptions& options) {
  // A count of the nonzero elements: an empty reduction counts 0, which is false.
  return greater(sum(not_equal(x, Scalar(false)), options), Scalar(int64_t{0}));
}

Array all(const Array& x, const ReduceOptions& options) {
  return equal(sum(equal(x, Scalar(false)), options), Scalar(int64_t{0}));
}

Array nansum(const Array& x, const ReduceOptions& options) {
  return sum(where(isnan(x), astype(scalar_array(Scalar(false)), x.dtype()), x), options);
}

Array nanmean(const Array& x, const ReduceOptions& options) {
  const Array count = sum(astype(not_equal(isnan(x), Scalar(true)), DType::int64()), options);
  const DType dtype = x.dtype().is_floating() || x.dtype().is_complex() ? x.dtype() : DType::float64();
  if (dtype == DType::float16()) {
    // A count past 65504 is no float16 (it would be inf): numpy divides by the
    // int64 count in a wider type, then rounds the mean to float16.
    return astype(astype(nansum(x, options), DType::float32()) / astype(count, DType::float32()), dtype);
  }
  return nansum(x, options) / astype(count, dtype.is_complex() ? (dtype == DType::complex64() ? DType::float32()
                                                                                             : DType::float64())
                                                               : dtype);
}

namespace {

// argmax or argmin along options.axis (at most one), or of the flattened array.
Array arg_reduce(bool max, const Array& x, const ReduceOptions& options) {
  const std::string name = max ? "argmax" : "argmin";
  if (options.axis.size() > 1) {
    throw Error(absl::StrCat(name, ": expected at most one axis, found ", options.axis.size()));
  }
  if (options.axis.empty()) {
    Array flat = arg_reduce_flat(max, x, options.split_every);
    return options.keepdims ? reshape(flat, Shape(x.ndim(), 1)) : flat;
  }
  Array along = arg_reduce_axis(max, x, options.axis[0], options.split_every);
  if (!options.keepdims) return along;
  return expand_dims(along, static_cast<int>(detail::axis_index(options.axis[0], x.ndim(), name)));
}

}  // namespace

Array argmax(const Array& x, const ReduceOptions& options) { return arg_reduce(true, x, options); }
Array argmin(const Array& x, const ReduceOptions& options) { return arg_reduce(false, x, options); }

namespace {

// nanmax and nanmin: NaNs replaced by the value that never wins, then max or
// min; a slice of NaNs only gives NaN (numpy warns and gives NaN too).
Array nan_extreme(bool max, const Array& x, const ReduceOptions& options) {
  const DType t = x.dtype();
  auto extreme = [max](const Array& a, const ReduceOptions& o) { return max ? array::max(a, o) : array::min(a, o); };
  if (!t.is_floating() && !t.is_complex()) return extreme(x, options);
  const double loser = max ? -std::numeric_limits<double>::infinity() : std::numeric_limits<double>::infinity();
  const Array nan = isnan(x);
  const Array best = extreme(where(nan, astype(scalar_array(Scalar(loser)), t), x), options);
  return where(all(nan, options), astype(scalar_array(Scalar(std::numeric_limits<double>::quiet_NaN())), t), best);
}

}  // namespace

Array nanmax(const Array& x, const ReduceOptions& options) { return nan_extreme(true, x, options); }
Array nanmin(const Array& x, const ReduceOptions& options) { return nan_extreme(false, x, options); }

}  // namespace tessera::array
