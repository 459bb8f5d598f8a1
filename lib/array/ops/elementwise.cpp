#include "tessera/array/ops/elementwise.hpp"

#include <string>
#include <type_traits>

#include <absl/strings/str_cat.h>

#include "array/ops/flat.hpp"
#include "tessera/array/ops/broadcast.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

// numpy's order of kinds: bool < integer < float < complex.
int kind_rank(DType d) {
  switch (d.kind()) {
    case 'b': return 0;
    case 'i':
    case 'u': return 1;
    case 'f': return 2;
    default: return 3;
  }
}

DType signed_of_size(size_t bytes) {
  switch (bytes) {
    case 1: return DType::int8();
    case 2: return DType::int16();
    case 4: return DType::int32();
    default: return DType::int64();
  }
}

// The smallest float (or complex, when `complex`) that holds integers of `bytes`
// exactly enough for numpy: 1-byte integers fit float16, 2-byte ones float32,
// wider ones need float64 (complex starts at complex64, numpy has no complex32).
DType float_for_int(size_t bytes, bool complex) {
  if (complex) return bytes <= 2 ? DType::complex64() : DType::complex128();
  return bytes == 1 ? DType::float16() : bytes == 2 ? DType::float32() : DType::float64();
}

// The operation on one element type. Signed integers wrap through unsigned
// arithmetic (numpy wraps; signed overflow is undefined in C++); on bools `+` is
// or and `*` is and, as numpy's.
template <class T>
T apply(BinaryOp op, T a, T b) {
  if constexpr (std::is_same_v<T, bool>) {
    return op == BinaryOp::add ? (a || b) : (a && b);
  } else if constexpr (std::is_integral_v<T> && std::is_signed_v<T>) {
    using U = std::make_unsigned_t<T>;
    U ua = static_cast<U>(a), ub = static_cast<U>(b);
    U r = op == BinaryOp::add ? U(ua + ub) : op == BinaryOp::subtract ? U(ua - ub) : U(ua * ub);
    return static_cast<T>(r);
  } else if constexpr (std::is_integral_v<T>) {
    // unsigned: promote to unsigned int at least, so uint16 * uint16 cannot overflow int.
    using W = std::common_type_t<T, unsigned>;
    W wa = a, wb = b;
    return static_cast<T>(op == BinaryOp::add ? W(wa + wb) : op == BinaryOp::subtract ? W(wa - wb) : W(wa * wb));
  } else {
    switch (op) {
      case BinaryOp::add: return a + b;
      case BinaryOp::subtract: return a - b;
      case BinaryOp::multiply: return a * b;
      case BinaryOp::divide: break;
    }
    return a / b;
  }
}

// `x op y` of two rank-1 Eigen expressions of T. Floats and complex numbers
// take Eigen's own operators (vectorized); integers and bools go through
// apply<T>, which carries numpy's wrapping and bool rules.
template <BinaryOp Op, class T, class X, class Y>
auto binary_expr(const X& x, const Y& y) {
  if constexpr (std::is_floating_point_v<T> || !std::is_arithmetic_v<T>) {
    if constexpr (Op == BinaryOp::add) return x + y;
    if constexpr (Op == BinaryOp::subtract) return x - y;
    if constexpr (Op == BinaryOp::multiply) return x * y;
    if constexpr (Op == BinaryOp::divide) return x / y;
  } else {
    return x.binaryExpr(y, [](T a, T b) { return apply<T>(Op, a, b); });
  }
}

// out[i] = a[i] op b[i] over n elements, one Eigen expression per op (fixed
// at compile time) and per mix of operand steps (detail::as_expressions).
template <class T>
void apply_n(BinaryOp op, const detail::Flat<T>& a, const detail::Flat<T>& b, T* out, int64_t n) {
  TensorMap<T, 1> o(out, n);
  auto run = [&]<BinaryOp Op>() {
    detail::as_expressions(n, [&](const auto& x, const auto& y) { o = binary_expr<Op, T>(x, y); }, a, b);
  };
  switch (op) {
    case BinaryOp::add: return run.template operator()<BinaryOp::add>();
    case BinaryOp::subtract: return run.template operator()<BinaryOp::subtract>();
    case BinaryOp::multiply: return run.template operator()<BinaryOp::multiply>();
    case BinaryOp::divide: return run.template operator()<BinaryOp::divide>();
  }
}

// `a op b` of two blocks of one shape (or broadcast views of one element).
NDArray apply_blocks(BinaryOp op, DType dtype, const NDArray& a, const NDArray& b) {
  NDArray out = NDArray::empty(dtype, a.shape());
  dispatch(dtype, [&]<class T>() {
    apply_n<T>(op, detail::flat<T>(a, dtype), detail::flat<T>(b, dtype), out.data<T>(), out.size());
  });
  return out;
}

NDArray apply_scalar(BinaryOp op, DType dtype, const NDArray& a, const Scalar& s, bool scalar_first) {
  NDArray out = NDArray::empty(dtype, a.shape());
  dispatch(dtype, [&]<class T>() {
    const T v = s.to<T>();
    const detail::Flat<T> x = detail::flat<T>(a, dtype), one{&v, 0, NDArray()};
    if (scalar_first) {
      apply_n<T>(op, one, x, out.data<T>(), out.size());
    } else {
      apply_n<T>(op, x, one, out.data<T>(), out.size());
    }
  });
  return out;
}

// The dtype a weak scalar takes next to an array of `array` (NEP 50).
DType weak_scalar_dtype(DType array, const Scalar& s) {
  const DType sd = s.dtype();
  if (kind_rank(sd) <= kind_rank(array)) return array;
  switch (kind_rank(sd)) {
    case 1: return DType::int64();
    case 2: return DType::float64();
    default: return array == DType::float32() || array == DType::float16() ? DType::complex64() : DType::complex128();
  }
}

}  // namespace

std::string_view op_name(BinaryOp op) {
  switch (op) {
    case BinaryOp::add: return "add";
    case BinaryOp::subtract: return "subtract";
    case BinaryOp::multiply: return "multiply";
    case BinaryOp::divide: break;
  }
  return "true_divide";
}

DType promote_types(DType a, DType b) {
  if (a == b) return a;
  if (kind_rank(a) > kind_rank(b)) std::swap(a, b);  // a has the lower (or equal) kind
  if (a.kind() == 'b') return b;
  if (a.is_integer() && b.is_integer()) {
    if (a.kind() == b.kind()) return a.itemsize() > b.itemsize() ? a : b;
    DType s = a.kind() == 'i' ? a : b, u = a.kind() == 'i' ? b : a;
    if (s.itemsize() > u.itemsize()) return s;
    return u.itemsize() < 8 ? signed_of_size(2 * u.itemsize()) : DType::float64();
  }
  if (a.is_integer()) {  // with a float or complex b
    DType need = float_for_int(a.itemsize(), b.is_complex());
    return need.itemsize() > b.itemsize() ? need : b;
  }
  if (a.is_floating() && b.is_complex()) {
    return a == DType::float64() ? DType::complex128() : b;
  }
  return a.itemsize() > b.itemsize() ? a : b;  // same kind
}

DType result_type(BinaryOp op, DType a, DType b) {
  DType r = promote_types(a, b);
  if (op == BinaryOp::subtract && r.kind() == 'b') {
    throw TypeError("numpy boolean subtract, the `-` operator, is not supported on bool arrays; "
                    "convert them with astype first");
  }
  if (op == BinaryOp::divide && (r.kind() == 'b' || r.is_integer())) return DType::float64();
  return r;
}

Array elementwise(BinaryOp op, const Array& a, const Array& b) {
  const DType dtype = result_type(op, a.dtype(), b.dtype());
  return blockwise_broadcast(std::string(op_name(op)), "", {a, b}, dtype, [op, dtype](std::span<const NDArray> x) {
    return apply_blocks(op, dtype, x[0], x[1]);
  });
}

Array elementwise(BinaryOp op, const Array& a, const Scalar& s, bool scalar_first) {
  const std::string name(op_name(op));
  const DType dtype = result_type(op, a.dtype(), weak_scalar_dtype(a.dtype(), s));
  dispatch(dtype, [&]<class T>() { (void)s.to<T>(); });  // TypeError now, not in a task
  // The scalar's exact bytes, so scalars that print alike still get their own tokens.
  const std::string value = dispatch(s.dtype(), [&]<class T>() {
    const T v = s.to<T>();
    return std::string(reinterpret_cast<const char*>(&v), sizeof v);
  });
  const std::string out =
      absl::StrCat(name, "-", token({name, a.name(), s.dtype().str(), value, scalar_first ? "s-a" : "a-s"}));
  Graph layer;
  auto f = [op, dtype, s, scalar_first](const NDArray& x) { return apply_scalar(op, dtype, x, s, scalar_first); };
  for_each_block(a.chunks(), [&](std::span<const int64_t> idx) {
    layer.put(Key(out, idx), Task(fn(name, f), ref(a.block_key(idx))));
  });
  return Array(out, a.chunks(), dtype, std::move(layer), {a});
}

Array astype(const Array& a, DType dtype) {
  if (a.dtype() == dtype) return a;
  const std::string out = absl::StrCat("astype-", token({"astype", a.name(), dtype.str()}));
  Graph layer;
  auto f = [dtype](const NDArray& x) { return x.astype(dtype); };
  for_each_block(a.chunks(), [&](std::span<const int64_t> idx) {
    layer.put(Key(out, idx), Task(fn("astype", f), ref(a.block_key(idx))));
  });
  return Array(out, a.chunks(), dtype, std::move(layer), {a});
}

}  // namespace tessera::array
