// Tree reductions (see reductions.hpp). A block's partial keeps the reduced
// axes at extent 1, so combining partials is element by element.
#include "tessera/array/ops/reductions.hpp"

#include <cmath>
#include <complex>
#include <limits>
#include <string>
#include <type_traits>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/kernels/table.hpp"
#include "array/ops/element.hpp"
#include "tessera/array/core/grid.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

enum class Kind { sum, mean, min, max, var };

// One block reduced: every position holds `count` elements' worth.
struct Partial {
  int64_t count = 0;
  NDArray a;  // sum | mean | extreme
  NDArray b;  // var: sum of squared deviations from `a`
  size_t nbytes() const { return a.nbytes() + (b.has_value() ? b.nbytes() : 0); }
};

}  // namespace
}  // namespace tessera::array

// Partials spill under a memory limit, and travel between ranks in a run across
// them (tessera/graph/wire.hpp), as their arrays do.
template <>
struct tessera::Spillable<tessera::array::Partial> {
  static void serialize(const array::Partial& p, SpillWriter& w) {
    w.put(p.count);
    Spillable<array::NDArray>::serialize(p.a, w);
    w.put(static_cast<uint8_t>(p.b.has_value()));
    if (p.b.has_value()) Spillable<array::NDArray>::serialize(p.b, w);
  }
  static array::Partial deserialize(SpillReader& r) {
    array::Partial p;
    p.count = r.get<int64_t>();
    p.a = Spillable<array::NDArray>::deserialize(r);
    if (r.get<uint8_t>() != 0) p.b = Spillable<array::NDArray>::deserialize(r);
    return p;
  }
};

namespace tessera::array {
namespace {

template <class T>
constexpr bool is_complex_v = DType(dtype_of<T>).is_complex();

// Accumulator of sums: int64 for bool and signed, uint64 for unsigned, double
// for real floats, complex<double> for complex.
template <class T>
using SumAcc = std::conditional_t<
    is_complex_v<T>, std::complex<double>,
    std::conditional_t<is_floating_v<T>, double,
                       std::conditional_t<std::is_unsigned_v<T> && !std::is_same_v<T, bool>, uint64_t, int64_t>>>;
// Accumulator of means: double, or complex<double>.
template <class T>
using MeanAcc = std::conditional_t<is_complex_v<T>, std::complex<double>, double>;

// Integer sums wrap as numpy's do (and as signed C++ arithmetic may not).
template <class A>
A add(A a, A b) {
  if constexpr (std::is_same_v<A, int64_t>) {
    return static_cast<int64_t>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}


// Complex numbers compare real part first, as numpy's do.
template <class T>
bool less(T a, T b) {
  if constexpr (is_complex_v<T>) {
    return a.real() < b.real() || (a.real() == b.real() && a.imag() < b.imag());
  } else {
    return a < b;
  }
}

// The extreme of a and b; a NaN wins, so NaN propagates.
template <class T>
T pick(Kind kind, T a, T b) {
  if (detail::is_nan(a)) return a;
  if (detail::is_nan(b)) return b;
  return (kind == Kind::min ? less(b, a) : less(a, b)) ? b : a;
}

// The extreme of a row of n >= 1 values. Real numbers: Eigen's minimum or
// maximum with NaN propagated, as numpy's (bench/algebra's max_axis1 rows put
// it within 1.2x of pick's loop, or faster). Complex numbers (ordered by real
// part, then imaginary) and bools: pick's loop.
template <class T>
T row_extreme(Kind kind, const T* row, int64_t n) {
  if constexpr (std::is_arithmetic_v<T> && !std::is_same_v<T, bool>) {
    const TensorMap<const T, 1> x(row, n);
    using Scalar0 = Eigen::Tensor<T, 0, Eigen::RowMajor>;
    return kind == Kind::min ? Scalar0(x.template minimum<Eigen::PropagateNaN>())()
                             : Scalar0(x.template maximum<Eigen::PropagateNaN>())();
  } else {
    T best = row[0];
    for (int64_t j = 1; j < n; ++j) best = pick(kind, best, row[j]);
    return best;
  }
}

// The sum of n contiguous values in accumulator A. float32 and float64 (in
// double): the kernel set chosen for the CPU (array/kernels). Other real and
// complex numbers: Eigen's sum of the row cast to A (bench/algebra's sum_all and
// sum_axis1 rows put it within 1.2x of the hand-written lanes it replaced).
// Integers and bools: eight independent lanes that wrap as numpy's sums do,
// which the compiler vectorizes (Eigen's sum of signed integers would overflow).
template <class A, class T>
A flat_sum(const T* x, int64_t n) {
  if constexpr (std::is_same_v<A, double> && std::is_same_v<T, float>) {
    return kernels::active().sum_f32(x, n);  // the kernel set chosen for the CPU (array/kernels)
  } else if constexpr (std::is_same_v<A, double> && std::is_same_v<T, double>) {
    return kernels::active().sum_f64(x, n);
  } else if constexpr (!std::is_integral_v<T>) {
    return Eigen::Tensor<A, 0, Eigen::RowMajor>(TensorMap<const T, 1>(x, n).template cast<A>().sum())();
  }
  A lane[8] = {};
  int64_t i = 0;
  for (; i + 8 <= n; i += 8) {
    for (int k = 0; k < 8; ++k) lane[k] = add(lane[k], static_cast<A>(x[i + k]));
  }
  A tail{};
  for (; i < n; ++i) tail = add(tail, static_cast<A>(x[i]));
  return add(add(add(add(lane[0], lane[1]), add(lane[2], lane[3])), add(add(lane[4], lane[5]), add(lane[6], lane[7]))),
             tail);
}

// The sum of |x[i] - m|^2 over n contiguous values: float32 and float64 by the
// kernel set chosen for the CPU (array/kernels), other real types by one Eigen
// expression (vectorized, partial sums side by side: a loop adding into one sum
// waits for each add), complex numbers by that loop.
template <class T, class A>
double squared_deviations(const T* x, int64_t n, A m) {
  if constexpr (std::is_same_v<T, float>) {
    return kernels::active().squared_deviations_f32(x, n, m);  // the kernel set chosen for the CPU
  } else if constexpr (std::is_same_v<T, double>) {
    return kernels::active().squared_deviations_f64(x, n, m);
  } else if constexpr (!is_complex_v<T>) {
    const auto d = TensorMap<const T, 1>(x, n).template cast<double>() - m;
    return Eigen::Tensor<double, 0, Eigen::RowMajor>(d.square().sum())();
  } else {
    double s = 0;
    for (int64_t j = 0; j < n; ++j) s += std::norm(static_cast<A>(x[j]) - m);
    return s;
  }
}

// Calls row(first element, length, partial offset) for every row along the last
// axis of a block whose last axis is contiguous (rows may lie anywhere: a block
// of a C-ordered file is read in place); the partial offset is where the row's
// elements go (the reduced axes' indices do not count). A 0-d block is one row of one.
template <class T, class F>
void for_each_row(const NDArray& block, const std::vector<bool>& reduced, F&& row) {
  const Shape& shape = block.shape();
  const Strides& strides = block.strides();
  const T* x = reinterpret_cast<const T*>(block.data());
  const size_t n = shape.size();
  if (n == 0) return row(x, int64_t{1}, int64_t{0});
  std::vector<int64_t> pstride(n);
  int64_t s = 1;
  for (size_t k = n; k-- > 0;) {
    pstride[k] = reduced[k] ? 0 : s;
    if (!reduced[k]) s *= shape[k];
  }
  const int64_t len = shape[n - 1];
  if (len == 0) return;
  for_each_index(std::span(shape.data(), n - 1), [&](std::span<const int64_t> idx) {
    int64_t o = 0, at = 0;
    for (size_t k = 0; k + 1 < n; ++k) o += idx[k] * pstride[k], at += idx[k] * strides[k];
    row(reinterpret_cast<const T*>(reinterpret_cast<const std::byte*>(x) + at), len, o);
  });
}

// The block itself when its rows are contiguous, else a C-ordered copy.
NDArray rows_contiguous(const NDArray& block) {
  const bool ok = block.ndim() == 0 || block.shape().back() <= 1 ||
                  block.strides().back() == static_cast<int64_t>(block.dtype().itemsize());
  return ok ? block : block.copy();
}

Shape partial_shape(const Shape& shape, const std::vector<bool>& reduced) {
  Shape p = shape;
  for (size_t k = 0; k < p.size(); ++k) {
    if (reduced[k]) p[k] = 1;
  }
  return p;
}

// Sums (wrapping for integers) of a block into a zeroed partial of accumulator A.
template <class A, class T>
NDArray sum_block(const NDArray& x, const std::vector<bool>& reduced) {
  const Shape& shape = x.shape();
  NDArray out = NDArray::zeros(dtype_of<A>, partial_shape(shape, reduced));
  A* o = out.data<A>();
  const bool last = !shape.empty() && reduced.back();
  for_each_row<T>(x, reduced, [&](const T* row, int64_t len, int64_t at) {
    if (last || shape.empty()) {
      o[at] = add(o[at], flat_sum<A>(row, len));
    } else {
      for (int64_t j = 0; j < len; ++j) o[at + j] = add(o[at + j], static_cast<A>(row[j]));
    }
  });
  return out;
}

// var's partial of a block whose last axis is reduced: each row's mean and
// squared deviations while the row is in cache, merged into its position's by
// Chan's update. One pass over memory, where the mean of the whole block first
// and the deviations after read the block twice (bench/kernels' std row).
template <class T>
void var_rows(const NDArray& c, const std::vector<bool>& reduced, Partial& p) {
  using A = MeanAcc<T>;
  p.a = NDArray::zeros(dtype_of<A>, partial_shape(c.shape(), reduced));
  p.b = NDArray::zeros(DType::float64(), p.a.shape());
  A* m = p.a.template data<A>();
  double* q = p.b.template data<double>();
  std::vector<int64_t> seen(static_cast<size_t>(p.a.size()), 0);
  for_each_row<T>(c, reduced, [&](const T* row, int64_t len, int64_t at) {
    const A row_mean = flat_sum<A>(row, len) / static_cast<double>(len);
    const double before = static_cast<double>(seen[at]), n = before + static_cast<double>(len);
    const A delta = row_mean - m[at];
    m[at] += delta * (static_cast<double>(len) / n);
    q[at] += squared_deviations(row, len, row_mean) + std::norm(delta) * (before * static_cast<double>(len) / n);
    seen[at] += len;
  });
}

template <class T>
Partial chunk_partial(Kind kind, const std::vector<bool>& reduced, const NDArray& block) {
  const NDArray c = rows_contiguous(block);
  const Shape& shape = c.shape();
  Partial p;
  p.count = 1;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (reduced[k]) p.count *= shape[k];
  }
  const bool last = !shape.empty() && reduced.back();
  if (kind == Kind::sum) {
    p.a = sum_block<SumAcc<T>, T>(c, reduced);
  } else if (kind == Kind::min || kind == Kind::max) {
    // Start from the first element along the reduced axes: min and max are
    // idempotent, so reading it again below is harmless.
    std::vector<Slice> first;
    for (bool r : reduced) first.push_back(r ? Slice{0, 1, 1} : Slice::all());
    p.a = p.count == 0 ? NDArray::empty(c.dtype(), partial_shape(shape, reduced)) : c.slice(first).copy();
    T* o = p.a.template data<T>();
    for_each_row<T>(c, reduced, [&](const T* row, int64_t len, int64_t at) {
      if (last || shape.empty()) {
        o[at] = pick(kind, o[at], row_extreme(kind, row, len));
      } else {
        for (int64_t j = 0; j < len; ++j) o[at + j] = pick(kind, o[at + j], row[j]);
      }
    });
  } else if (kind == Kind::var && (last || shape.empty())) {
    var_rows<T>(c, reduced, p);
  } else {  // mean, and var along leading axes only: the mean first
    using A = MeanAcc<T>;
    p.a = sum_block<A, T>(c, reduced);
    A* m = p.a.template data<A>();
    const int64_t positions = p.a.size();
    if (p.count > 0) {
      for (int64_t i = 0; i < positions; ++i) m[i] /= static_cast<double>(p.count);
    }
    if (kind == Kind::var) {
      p.b = NDArray::zeros(DType::float64(), p.a.shape());
      double* q = p.b.template data<double>();
      for_each_row<T>(c, reduced, [&](const T* row, int64_t len, int64_t at) {
        for (int64_t j = 0; j < len; ++j) q[at + j] += std::norm(static_cast<A>(row[j]) - m[at + j]);
      });
    }
  }
  return p;
}

// Merges `from` into `into`, element by element.
template <class T>
void combine_into(Kind kind, Partial& into, const Partial& from) {
  if (kind == Kind::min || kind == Kind::max) {
    T* a = into.a.template data<T>();
    const T* b = from.a.template data<const T>();
    for (int64_t i = 0; i < into.a.size(); ++i) a[i] = pick(kind, a[i], b[i]);
  } else if (kind == Kind::sum) {
    using A = SumAcc<T>;
    A* a = into.a.template data<A>();
    const A* b = from.a.template data<const A>();
    for (int64_t i = 0; i < into.a.size(); ++i) a[i] = add(a[i], b[i]);
  } else if (from.count > 0) {  // mean, var: weighted means, then Chan's update of M2
    using A = MeanAcc<T>;
    A* ma = into.a.template data<A>();
    const A* mb = from.a.template data<const A>();
    const double n = static_cast<double>(into.count), m = static_cast<double>(from.count), total = n + m;
    for (int64_t i = 0; i < into.a.size(); ++i) {
      A delta = mb[i] - ma[i];
      ma[i] += delta * (m / total);
      if (kind == Kind::var) {
        into.b.template data<double>()[i] +=
            from.b.template data<const double>()[i] + std::norm(delta) * (n * m / total);
      }
    }
  }
  into.count += from.count;
}

template <class T>
Partial combine(Kind kind, const ValueList& parts) {
  const Partial& first = parts.at(0).as<Partial>();
  Partial out{first.count, first.a.copy(), first.b.has_value() ? first.b.copy() : NDArray()};
  for (size_t i = 1; i < parts.size(); ++i) combine_into<T>(kind, out, parts[i].as<Partial>());
  return out;
}

template <class T>
NDArray finalize(Kind kind, const Partial& p, int ddof, bool root, DType dtype, const Shape& shape) {
  NDArray r = p.a;
  if (kind == Kind::mean && p.count == 0) {
    r = NDArray::full(p.a.dtype(), p.a.shape(), std::numeric_limits<double>::quiet_NaN());
  } else if (kind == Kind::var) {
    r = NDArray::empty(DType::float64(), p.b.shape());
    double* out = r.data<double>();
    const double* q = p.b.template data<const double>();
    const double divisor = static_cast<double>(std::max<int64_t>(p.count - ddof, 0));
    for (int64_t i = 0; i < r.size(); ++i) {
      // numpy divides too: 0/0 is NaN, x/0 infinity.
      double v = divisor > 0 ? q[i] / divisor
                             : (q[i] == 0 ? std::numeric_limits<double>::quiet_NaN()
                                          : std::numeric_limits<double>::infinity());
      out[i] = root ? std::sqrt(v) : v;
    }
  }
  if (r.dtype() != dtype) r = r.astype(dtype);
  return r.reshape(shape);
}

DType result_dtype(Kind kind, DType in) {
  const bool exact = in.kind() == 'b' || in.is_integer();
  switch (kind) {
    case Kind::sum:
      return in.kind() == 'u' ? DType::uint64() : exact ? DType::int64() : in;
    case Kind::mean:
      return exact ? DType::float64() : in;
    case Kind::var:
      if (exact || in == DType::complex128()) return DType::float64();
      return in == DType::complex64() ? DType::float32() : in;
    default:
      return in;
  }
}

std::vector<bool> reduced_axes(const std::vector<int>& axis, size_t ndim) {
  std::vector<bool> reduced(ndim, axis.empty());
  for (int a : axis) {
    const int64_t n = static_cast<int64_t>(ndim);
    if (a < -n || a >= n) {
      throw Error(absl::StrCat("axis ", a, " is out of bounds for an array of ", ndim, " dimension(s)"));
    }
    size_t k = static_cast<size_t>(a < 0 ? a + n : a);
    if (reduced[k]) throw Error(absl::StrCat("axis ", k, " is given twice in the axes to reduce"));
    reduced[k] = true;
  }
  return reduced;
}

// dask's spreading of an integer split_every over the reduced axes.
int64_t fan_in_per_axis(int split_every, size_t axes) {
  auto k = static_cast<int64_t>(std::floor(std::pow(split_every, 1.0 / static_cast<double>(axes)) + 1e-9));
  return std::max<int64_t>(k, 2);
}

Array reduce(Kind kind, std::string_view op, const Array& x, const ReduceOptions& o, bool root = false) {
  const std::string name(op);
  const std::vector<bool> reduced = reduced_axes(o.axis, x.ndim());
  if (o.split_every < 2) {
    throw Error(absl::StrCat(name, ": split_every must be at least 2, found ", o.split_every));
  }
  const Shape shape = x.shape();
  Shape out_shape;
  std::vector<std::vector<int64_t>> out_sizes;
  bool empty_reduced = false;
  for (size_t k = 0; k < shape.size(); ++k) {
    if (reduced[k] && shape[k] == 0) empty_reduced = true;
    if (!reduced[k] || o.keepdims) out_sizes.push_back(reduced[k] ? std::vector<int64_t>{1} : x.chunks()[k]);
    if (!reduced[k] || o.keepdims) out_shape.push_back(reduced[k] ? 1 : shape[k]);
  }
  int64_t out_size = 1;
  for (int64_t s : out_shape) out_size *= s;
  if ((kind == Kind::min || kind == Kind::max) && empty_reduced && out_size > 0) {
    throw Error(absl::StrCat("zero-size array to reduction operation ", name, " which has no identity: '",
                             x.name(), "' has shape ", shape_str(shape)));
  }
  const DType in = x.dtype(), out_dtype = result_dtype(kind, in);
  std::vector<std::string> axes_text;
  for (bool r : reduced) axes_text.push_back(r ? "1" : "0");
  const std::string tok = token({name, x.name(), absl::StrJoin(axes_text, ""), o.keepdims ? "k" : "-",
                                 std::to_string(o.split_every), std::to_string(o.ddof)});
  const std::string out_name = absl::StrCat(name, "-", tok);
  Graph layer;

  std::string level_name = absl::StrCat(name, "-chunk-", tok);
  for_each_block(x.chunks(), [&](std::span<const int64_t> idx) {
    auto f = [kind, reduced, in](const NDArray& block) {
      return dispatch(in, [&]<class T>() { return chunk_partial<T>(kind, reduced, block); });
    };
    layer.put(Key(level_name, idx), Task(fn(name + "-chunk", std::move(f)), ref(x.block_key(idx))));
  });

  size_t n_reduced = 0;
  for (bool r : reduced) n_reduced += r;
  const int64_t fan_in = fan_in_per_axis(o.split_every, std::max<size_t>(n_reduced, 1));
  std::vector<int64_t> grid = x.numblocks();
  auto done = [&] {
    for (size_t k = 0; k < grid.size(); ++k) {
      if (reduced[k] && grid[k] > 1) return false;
    }
    return true;
  };
  for (int level = 1; !done(); ++level) {
    std::vector<int64_t> next = grid;
    for (size_t k = 0; k < grid.size(); ++k) {
      if (reduced[k]) next[k] = (grid[k] + fan_in - 1) / fan_in;
    }
    const std::string next_name = absl::StrCat(name, "-combine", level, "-", tok);
    for_each_index(next, [&](std::span<const int64_t> idx) {
      // The children: up to fan_in neighbours along each reduced axis.
      std::vector<int64_t> lo(idx.begin(), idx.end()), extent(idx.size(), 1);
      for (size_t k = 0; k < idx.size(); ++k) {
        if (!reduced[k]) continue;
        lo[k] = idx[k] * fan_in;
        extent[k] = std::min(fan_in, grid[k] - lo[k]);
      }
      ArgList children;
      for_each_index(extent, [&](std::span<const int64_t> d) {
        std::vector<int64_t> child(lo);
        for (size_t k = 0; k < d.size(); ++k) child[k] += d[k];
        children.items.emplace_back(ref(Key(level_name, child)));
      });
      auto f = [kind, in](const ValueList& parts) {
        return dispatch(in, [&]<class T>() { return combine<T>(kind, parts); });
      };
      layer.put(Key(next_name, idx), Task(fn(name + "-combine", std::move(f)), std::move(children)));
    });
    grid = std::move(next);
    level_name = next_name;
  }

  Chunks out_chunks(out_sizes);
  for_each_index(grid, [&](std::span<const int64_t> idx) {
    std::vector<int64_t> out_idx;
    for (size_t k = 0; k < idx.size(); ++k) {
      if (!reduced[k] || o.keepdims) out_idx.push_back(idx[k]);
    }
    Shape block_shape = out_chunks.block_shape(out_idx);
    auto f = [kind, in, ddof = o.ddof, root, out_dtype, block_shape](const Partial& p) {
      return dispatch(in, [&]<class T>() { return finalize<T>(kind, p, ddof, root, out_dtype, block_shape); });
    };
    layer.put(Key(out_name, out_idx), Task(fn(name + "-aggregate", std::move(f)), ref(Key(level_name, idx))));
  });
  return Array(out_name, std::move(out_chunks), out_dtype, std::move(layer), {x});
}

}  // namespace

Array sum(const Array& x, const ReduceOptions& options) { return reduce(Kind::sum, "sum", x, options); }
Array mean(const Array& x, const ReduceOptions& options) { return reduce(Kind::mean, "mean", x, options); }
Array min(const Array& x, const ReduceOptions& options) { return reduce(Kind::min, "min", x, options); }
Array max(const Array& x, const ReduceOptions& options) { return reduce(Kind::max, "max", x, options); }
Array var(const Array& x, const ReduceOptions& options) { return reduce(Kind::var, "var", x, options); }
Array std(const Array& x, const ReduceOptions& options) { return reduce(Kind::var, "std", x, options, true); }

}  // namespace tessera::array
