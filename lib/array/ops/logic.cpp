// Comparisons, where and isnan as broadcast block tasks; any, all, nansum and
// nanmean composed from them and the tree reductions.
#include "tessera/array/ops/logic.hpp"

#include <cmath>
#include <complex>
#include <string>
#include <type_traits>

#include "tessera/array/ops/broadcast.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
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

template <class T>
bool is_nan(const T& v) {
  if constexpr (std::is_floating_point_v<T>) {
    return std::isnan(v);
  } else if constexpr (requires { v.imag(); }) {
    return std::isnan(v.real()) || std::isnan(v.imag());
  } else {
    return false;
  }
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
  if (is_nan(a) || is_nan(b)) return op == CompareOp::not_equal;
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

NDArray contiguous(const NDArray& x, DType dtype) {
  if (x.dtype() != dtype) return x.astype(dtype);
  return x.is_c_contiguous() ? x : x.copy();
}

NDArray compare_blocks(CompareOp op, DType dtype, const NDArray& a, const NDArray& b) {
  const NDArray ca = contiguous(a, dtype), cb = contiguous(b, dtype);
  NDArray out = NDArray::empty(DType::bool_(), a.shape());
  bool* o = out.data<bool>();
  dispatch(dtype, [&]<class T>() {
    const T* x = ca.data<const T>();
    const T* y = cb.data<const T>();
    for (int64_t i = 0; i < out.size(); ++i) o[i] = apply<T>(op, x[i], y[i]);
  });
  return out;
}

NDArray where_blocks(DType dtype, const NDArray& cond, const NDArray& a, const NDArray& b) {
  const NDArray c = contiguous(cond, DType::bool_()), ca = contiguous(a, dtype), cb = contiguous(b, dtype);
  NDArray out = NDArray::empty(dtype, c.shape());
  const bool* m = c.data<const bool>();
  dispatch(dtype, [&]<class T>() {
    const T* x = ca.data<const T>();
    const T* y = cb.data<const T>();
    T* o = out.data<T>();
    for (int64_t i = 0; i < out.size(); ++i) o[i] = m[i] ? x[i] : y[i];
  });
  return out;
}

// A one-element array of `s` (in its own dtype), to broadcast against an Array.
Array scalar_array(const Scalar& s) { return from_ndarray(NDArray::full(s.dtype(), {}, s)); }

}  // namespace

Array compare(CompareOp op, const Array& a, const Array& b) {
  const DType dtype = promote_types(a.dtype(), b.dtype());
  return blockwise_broadcast(compare_name(op), "", {a, b}, DType::bool_(), [op, dtype](absl::Span<const NDArray> x) {
    return compare_blocks(op, dtype, x[0], x[1]);
  });
}

Array compare(CompareOp op, const Array& a, const Scalar& s) { return compare(op, a, scalar_array(s)); }

Array where(const Array& cond, const Array& a, const Array& b) {
  const DType dtype = promote_types(a.dtype(), b.dtype());
  return blockwise_broadcast("where", "", {cond, a, b}, dtype, [dtype](absl::Span<const NDArray> x) {
    return where_blocks(dtype, x[0], x[1], x[2]);
  });
}

Array isnan(const Array& x) {
  return blockwise_broadcast("isnan", "", {x}, DType::bool_(), [](absl::Span<const NDArray> b) {
    NDArray out = NDArray::empty(DType::bool_(), b[0].shape());
    const NDArray c = b[0].is_c_contiguous() ? b[0] : b[0].copy();
    bool* o = out.data<bool>();
    dispatch(c.dtype(), [&]<class T>() {
      const T* v = c.data<const T>();
      for (int64_t i = 0; i < out.size(); ++i) o[i] = is_nan(v[i]);
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
  return nansum(x, options) / astype(count, dtype.is_complex() ? (dtype == DType::complex64() ? DType::float32()
                                                                                             : DType::float64())
                                                               : dtype);
}

}  // namespace tessera::array
