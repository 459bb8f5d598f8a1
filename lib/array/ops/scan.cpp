// cumsum and cumprod: a scan per block, then a chain of carried totals along the axis.
//
// Every block is seen as a rank-3 tensor (outer, m, inner) around the scanned
// axis, so one loop (the scan) and one Eigen expression of fixed rank (the
// carry) serve blocks of any rank.
#include "tessera/array/ops/scan.hpp"

#include <algorithm>
#include <string>
#include <type_traits>

#include <absl/strings/str_cat.h>

#include "array/block.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "array/ops/axes.hpp"
#include "tessera/array/core/tensor.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

enum class ScanOp { sum, prod };

DType scan_dtype(DType d) {
  if (d.kind() == 'b' || d.kind() == 'i') return DType::int64();
  if (d.kind() == 'u') return DType::uint64();
  return d;
}

// The type a scan of T accumulates in: signed integers in their unsigned twin
// of the same width, which wraps modulo 2^n as numpy's integers do (signed
// overflow is undefined behaviour in C++); the bits are the same, so the result
// is read back as T.
template <class T>
using Wrapping =
    typename std::conditional_t<std::is_integral_v<T> && std::is_signed_v<T>, std::make_unsigned<T>,
                                std::type_identity<T>>::type;

// `b` as a read-only C-contiguous (outer, m, inner) tensor of `dtype` (whose
// element type is T), its elements read as Wrapping<T>, kept alive by `keep`.
template <class T>
TensorMap<const Wrapping<T>, 3> as_3d(const NDArray& b, size_t axis, DType dtype, NDArray& keep) {
  keep = b.dtype() == dtype ? (b.is_c_contiguous() ? b : b.copy()) : b.astype(dtype);
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= b.shape()[k];
  for (size_t k = axis + 1; k < b.ndim(); ++k) inner *= b.shape()[k];
  keep = keep.reshape({outer, b.shape()[axis], inner});
  const TensorMap<const T, 3> t = keep.tensor<const T, 3>();
  return TensorMap<const Wrapping<T>, 3>(reinterpret_cast<const Wrapping<T>*>(t.data()), t.dimensions());
}

// The writable (outer, m, inner) map of `out` (C-contiguous, of T) read as Wrapping<T>.
template <class T>
TensorMap<Wrapping<T>, 3> out_3d(NDArray& out, const TensorMap<const Wrapping<T>, 3>& like) {
  return TensorMap<Wrapping<T>, 3>(reinterpret_cast<Wrapping<T>*>(out.data<T>()), like.dimensions());
}

// The scan of one block, line by line of the (outer, m, inner) view: each line
// of `inner` elements is the previous output line op this input line, so the
// loop walks memory in order and vectorizes across the line. Eigen's
// TensorScanOp walks each of the `inner` columns down the axis instead, a
// stride of a whole line per element: bench/algebra prints both kernels.
NDArray scan_block(ScanOp op, const NDArray& b, size_t axis, DType dtype) {
  NDArray out = NDArray::empty(dtype, b.shape());
  dispatch(dtype, [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using W = Wrapping<T>;
      NDArray in;
      const TensorMap<const W, 3> x = as_3d<T>(b, axis, dtype, in);
      const int64_t outer = x.dimension(0), m = x.dimension(1), inner = x.dimension(2);
      const W* src = x.data();
      W* dst = out_3d<T>(out, x).data();
      auto lines = [&](auto combine) {
        for (int64_t o = 0; o < outer; ++o) {
          const W* xs = src + o * m * inner;
          W* ys = dst + o * m * inner;
          if (m > 0) std::copy(xs, xs + inner, ys);
          for (int64_t i = 1; i < m; ++i) {
            const W* prev = ys + (i - 1) * inner;
            const W* row = xs + i * inner;
            W* cur = ys + i * inner;
            for (int64_t j = 0; j < inner; ++j) cur[j] = combine(prev[j], row[j]);
          }
        }
      };
      // W(...): the product of two uint8 or uint16 is an int, which must not overflow either.
      if (op == ScanOp::sum) {
        lines([](W a, W v) { return W(a + v); });
      } else {
        lines([](W a, W v) { return W(a * v); });
      }
    }
  });
  return out;
}

// The last slice of a scanned block along `axis` (extent 1 kept), op the carry so far.
NDArray next_carry(ScanOp op, const NDArray& scanned, const NDArray* carry, size_t axis) {
  std::vector<Slice> s(scanned.ndim());
  const int64_t m = scanned.shape()[axis];
  s[axis] = Slice{m - 1, m};
  NDArray last = scanned.slice(s).copy();
  if (carry == nullptr) return last;
  dispatch(last.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      using W = Wrapping<T>;
      W* l = reinterpret_cast<W*>(last.data<T>());
      const W* c = reinterpret_cast<const W*>(carry->data<const T>());
      for (int64_t i = 0; i < last.size(); ++i) l[i] = op == ScanOp::sum ? W(l[i] + c[i]) : W(l[i] * c[i]);
    }
  });
  return last;
}

// A scanned block with the carry of the blocks before it applied.
NDArray apply_carry(ScanOp op, const NDArray& scanned, const NDArray& carry, size_t axis) {
  NDArray out = NDArray::empty(scanned.dtype(), scanned.shape());
  dispatch(scanned.dtype(), [&]<class T>() {
    if constexpr (!std::is_same_v<T, bool>) {
      NDArray in, c;
      const TensorMap<const Wrapping<T>, 3> x = as_3d<T>(scanned, axis, scanned.dtype(), in);
      const TensorMap<const Wrapping<T>, 3> y = as_3d<T>(carry, axis, scanned.dtype(), c);
      const Eigen::array<Eigen::Index, 3> times{1, x.dimension(1), 1};
      auto o = out_3d<T>(out, x);
      if (op == ScanOp::sum) {
        o = x + y.broadcast(times);
      } else {
        o = x * y.broadcast(times);
      }
    }
  });
  return out;
}

Array scan(ScanOp op, const Array& x, int axis_arg) {
  const std::string name = op == ScanOp::sum ? "cumsum" : "cumprod";
  if (x.ndim() == 0) throw Error(absl::StrCat(name, ": needs an array of at least one dimension, found a 0-d array"));
  const size_t axis = detail::axis_index(axis_arg, x.ndim(), name);
  const DType dtype = scan_dtype(x.dtype());
  const std::string tok = token({name, x.name(), std::to_string(axis)});
  const std::string out = absl::StrCat(name, "-", tok), part = absl::StrCat(name, "-block-", tok),
                    carry = absl::StrCat(name, "-carry-", tok);
  auto f_scan = [op, axis, dtype](const NDArray& b) { return scan_block(op, b, axis, dtype); };
  auto f_first = [op, axis](const NDArray& s) { return next_carry(op, s, nullptr, axis); };
  auto f_next = [op, axis](const NDArray& s, const NDArray& c) { return next_carry(op, s, &c, axis); };
  auto f_apply = [op, axis](const NDArray& s, const NDArray& c) { return apply_carry(op, s, c, axis); };
  Graph layer;
  for_each_block(x.chunks(), [&](std::span<const int64_t> idx) {
    layer.put(Key(part, idx), Task(fn(name, f_scan), ref(x.block_key(idx))));
    const int64_t j = idx[axis];
    if (j == 0) {
      layer.alias(Key(out, idx), Key(part, idx));
      return;
    }
    // carry (.., j, ..): the total of blocks 0..j-1 along the axis.
    std::vector<int64_t> prev(idx.begin(), idx.end());
    prev[axis] = j - 1;
    if (j == 1) {
      layer.put(Key(carry, idx), Task(fn(name + "-carry", f_first), ref(Key(part, prev))));
    } else {
      layer.put(Key(carry, idx), Task(fn(name + "-carry", f_next), ref(Key(part, prev)), ref(Key(carry, prev))));
    }
    layer.put(Key(out, idx), Task(fn(name + "-apply", f_apply), ref(Key(part, idx)), ref(Key(carry, idx))));
  });
  return Array(out, x.chunks(), dtype, std::move(layer), {x});
}

}  // namespace

Array cumsum(const Array& x, int axis) { return scan(ScanOp::sum, x, axis); }
Array cumprod(const Array& x, int axis) { return scan(ScanOp::prod, x, axis); }

}  // namespace tessera::array
