// tessera/array/ops/elementwise.hpp — `+ - * /` between Arrays and with scalars.
//
// Two Arrays combine when their shapes broadcast (numpy's rule; broadcast.hpp):
// their chunks are unified first, so each output block is one task over one
// block of each operand. The result
// dtype follows numpy's promotion (`promote_types`); a scalar is "weak" as in
// numpy 2 (NEP 50): it takes the array's dtype when its kind (bool < integer <
// float < complex) is not higher, and an integer scalar that does not fit the
// array's integer dtype is a TypeError. `/` is true division: integer and bool
// operands give float64. On bools, `+` is logical or and `*` logical and, as in
// numpy; `-` is refused. Integer overflow wraps, as in numpy.
//
// @code
//   namespace ta = tessera::array;
//   ta::Array z = (x + y) * 0.5 - 1;      // any chunks; shapes that broadcast
//   ta::Array w = 1.0 / x;
//   ta::Array f = ta::astype(x, ta::DType::float32());
// @endcode
//
// Thread-safe: these functions may be called from any thread.
#pragma once

#include <string_view>

#include "tessera/array/array.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/scalar.hpp"

namespace tessera::array {

//! The four arithmetic operations.
enum class BinaryOp { add, subtract, multiply, divide };

//! numpy's name of an operation: "add", "subtract", "multiply", "true_divide".
std::string_view op_name(BinaryOp op);

//! numpy's `promote_types`: the smallest dtype both `a` and `b` convert to safely
//! (int64 with uint64 gives float64).
DType promote_types(DType a, DType b);

//! The dtype of `op` on operands of `a` and `b` (TypeError for bool `-`).
DType result_type(BinaryOp op, DType a, DType b);

//! `a op b` block by block, broadcast and with chunks unified (broadcast.hpp).
//! ChunkError when the shapes do not broadcast; TypeError for an operation the
//! dtypes do not support.
Array elementwise(BinaryOp op, const Array& a, const Array& b);
//! `a op s`, or `s op a` when `scalar_first`.
Array elementwise(BinaryOp op, const Array& a, const Scalar& s, bool scalar_first = false);

//! The elements converted to `dtype`, as numpy's astype (out-of-range values wrap
//! or saturate as C++ casts do). The same array when `dtype` is its own.
Array astype(const Array& a, DType dtype);

inline Array operator+(const Array& a, const Array& b) { return elementwise(BinaryOp::add, a, b); }
inline Array operator-(const Array& a, const Array& b) { return elementwise(BinaryOp::subtract, a, b); }
inline Array operator*(const Array& a, const Array& b) { return elementwise(BinaryOp::multiply, a, b); }
inline Array operator/(const Array& a, const Array& b) { return elementwise(BinaryOp::divide, a, b); }

inline Array operator+(const Array& a, const Scalar& s) { return elementwise(BinaryOp::add, a, s); }
inline Array operator-(const Array& a, const Scalar& s) { return elementwise(BinaryOp::subtract, a, s); }
inline Array operator*(const Array& a, const Scalar& s) { return elementwise(BinaryOp::multiply, a, s); }
inline Array operator/(const Array& a, const Scalar& s) { return elementwise(BinaryOp::divide, a, s); }

inline Array operator+(const Scalar& s, const Array& a) { return elementwise(BinaryOp::add, a, s, true); }
inline Array operator-(const Scalar& s, const Array& a) { return elementwise(BinaryOp::subtract, a, s, true); }
inline Array operator*(const Scalar& s, const Array& a) { return elementwise(BinaryOp::multiply, a, s, true); }
inline Array operator/(const Scalar& s, const Array& a) { return elementwise(BinaryOp::divide, a, s, true); }

}  // namespace tessera::array
