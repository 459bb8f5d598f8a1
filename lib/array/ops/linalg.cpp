// tensordot on Arrays: contracted axes cut alike, GEMM tasks that each sum up
// to split_every block products in place, their results summed by a tree.
//
// A block product moves the left block's free axes before its contracted ones
// and the right block's contracted axes before its free ones (a copy when they
// are not already so: Eigen's GEMM reads contiguous row-major matrices), so
// every contraction is one (M x K) by (K x N) matrix product. float32 and float64
// ones run the GEMM of the kernel set chosen for the CPU (array/kernels); integer
// and complex ones this file's Eigen, built for the baseline.
#include "tessera/array/ops/linalg.hpp"

#include <algorithm>
#include <map>
#include <string>

#include <Eigen/Core>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/block.hpp"
#include "array/kernels/table.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "array/ops/axes.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

// What one block product needs.
struct Contraction {
  std::vector<size_t> a_perm, b_perm;  // free then contracted; contracted then free
  size_t a_free, b_free;               // how many free axes each has
  DType dtype;
};

// A C-contiguous copy (or the block itself) of `b` permuted by `perm`, of `dtype`.
NDArray arranged(const NDArray& b, const std::vector<size_t>& perm, DType dtype) {
  const NDArray t = b.transpose(perm);
  if (t.dtype() != dtype) return t.astype(dtype);
  return t.is_c_contiguous() ? t : t.copy();
}

// The sum of the products of block pairs (a0, b0, a1, b1, ...), accumulated in
// place by Eigen's GEMM (beta = 1): no partial product is ever a block of its own.
NDArray multiply_blocks(const Contraction& c, const ValueList& pairs) {
  // bool products are counted in int64 and tested for nonzero (numpy's or of ands);
  // float16 ones in float32, rounded once at the end (numpy's float16 matmul sums
  // in float32 too, and Eigen's GEMM on Eigen::half rounds after every step).
  const DType work = c.dtype == DType::bool_()    ? DType::int64()
                     : c.dtype == DType::float16() ? DType::float32()
                                                   : c.dtype;
  NDArray out;
  for (size_t p = 0; p + 1 < pairs.size(); p += 2) {
    const NDArray ma = arranged(block_value(pairs[p], "tensordot"), c.a_perm, work);
    const NDArray mb = arranged(block_value(pairs[p + 1], "tensordot"), c.b_perm, work);
    const size_t a_nd = ma.ndim();
    const int64_t m = detail::product(ma.shape(), 0, c.a_free), k = detail::product(ma.shape(), c.a_free, a_nd);
    const int64_t n = detail::product(mb.shape(), mb.ndim() - c.b_free, mb.ndim());
    if (p == 0) {
      Shape shape(ma.shape().begin(), ma.shape().begin() + static_cast<long>(c.a_free));
      shape.insert(shape.end(), mb.shape().end() - static_cast<long>(c.b_free), mb.shape().end());
      out = NDArray::empty(work, shape);
    }
    dispatch(work, [&]<class T>() {
      if constexpr (kernels::has_gemm<T>) {
        const T* x = reinterpret_cast<const T*>(ma.data());
        kernels::gemm<T>()(m, n, k, x, reinterpret_cast<const T*>(mb.data()), out.data<T>(), p > 0);
      } else if constexpr (!std::is_same_v<T, bool> && !std::is_same_v<T, Eigen::half>) {
        using Matrix = Eigen::Matrix<T, Eigen::Dynamic, Eigen::Dynamic, Eigen::RowMajor>;
        Eigen::Map<const Matrix> x(reinterpret_cast<const T*>(ma.data()), m, k);
        Eigen::Map<const Matrix> y(reinterpret_cast<const T*>(mb.data()), k, n);
        Eigen::Map<Matrix> z(out.data<T>(), m, n);
        if (p == 0 && k == 0) {
          z.setZero();
        } else if (p == 0) {
          z.noalias() = x * y;
        } else if (k > 0) {
          z.noalias() += x * y;
        }
      }
    });
  }
  return work == c.dtype ? out : out.astype(c.dtype);
}

// The sum of partial products of one shape and dtype (bool: or).
NDArray add_blocks(const ValueList& parts) {
  NDArray out = block_value(parts.front(), "tensordot").copy();
  for (size_t p = 1; p < parts.size(); ++p) {
    const NDArray& b = block_value(parts[p], "tensordot");
    dispatch(out.dtype(), [&]<class T>() {
      T* o = out.data<T>();
      const T* x = b.data<const T>();
      for (int64_t i = 0; i < out.size(); ++i) {
        if constexpr (std::is_same_v<T, bool>) {
          o[i] = o[i] || x[i];
        } else {
          o[i] += x[i];
        }
      }
    });
  }
  return out;
}

std::vector<size_t> contracted_axes(const std::vector<int>& axes, size_t ndim, const std::string& which) {
  std::vector<size_t> out;
  std::vector<bool> seen(ndim, false);
  for (int a : axes) {
    const size_t k = detail::axis_index(a, ndim, "tensordot");
    if (seen[k]) throw Error(absl::StrCat("tensordot: axis ", a, " of the ", which, " array is given twice"));
    seen[k] = true;
    out.push_back(k);
  }
  return out;
}

}  // namespace

Array tensordot(const Array& a0, const Array& b0, const ContractAxes& axes, int split_every) {
  if (split_every < 2) throw Error(absl::StrCat("tensordot: split_every must be at least 2, found ", split_every));
  if (axes.first.size() != axes.second.size()) {
    throw Error(absl::StrCat("tensordot: expected as many axes of the second array as of the first, found ",
                             axes.second.size(), " and ", axes.first.size()));
  }
  const std::vector<size_t> ca = contracted_axes(axes.first, a0.ndim(), "first");
  const std::vector<size_t> cb = contracted_axes(axes.second, b0.ndim(), "second");
  Array a = a0, b = b0;
  for (size_t i = 0; i < ca.size(); ++i) {
    if (a.shape()[ca[i]] != b.shape()[cb[i]]) {
      throw Error(absl::StrCat("tensordot: axis ", ca[i], " of the first array (length ", a.shape()[ca[i]],
                               ") does not match axis ", cb[i], " of the second (length ", b.shape()[cb[i]], ")"));
    }
    const std::vector<int64_t> common = detail::common_refinement({&a.chunks()[ca[i]], &b.chunks()[cb[i]]});
    a = rechunk(a, std::map<size_t, AxisChunks>{{ca[i], AxisChunks(common)}});
    b = rechunk(b, std::map<size_t, AxisChunks>{{cb[i], AxisChunks(common)}});
  }
  Contraction c;
  c.dtype = promote_types(a.dtype(), b.dtype());
  std::vector<size_t> free_a, free_b;
  for (size_t k = 0; k < a.ndim(); ++k) {
    if (std::find(ca.begin(), ca.end(), k) == ca.end()) free_a.push_back(k);
  }
  for (size_t k = 0; k < b.ndim(); ++k) {
    if (std::find(cb.begin(), cb.end(), k) == cb.end()) free_b.push_back(k);
  }
  c.a_perm = free_a;
  c.a_perm.insert(c.a_perm.end(), ca.begin(), ca.end());
  c.b_perm = cb;
  c.b_perm.insert(c.b_perm.end(), free_b.begin(), free_b.end());
  c.a_free = free_a.size();
  c.b_free = free_b.size();
  std::vector<std::vector<int64_t>> sizes;
  for (size_t k : free_a) sizes.push_back(a.chunks()[k]);
  for (size_t k : free_b) sizes.push_back(b.chunks()[k]);
  const Chunks chunks(std::move(sizes));
  std::vector<int64_t> inner;  // blocks along the contracted axes
  for (size_t k : ca) inner.push_back(a.numblocks()[k]);

  const std::string tok = token({"tensordot", a.name(), b.name(), absl::StrJoin(ca, ","), absl::StrJoin(cb, ","),
                                 std::to_string(split_every)});
  const std::string out = "tensordot-" + tok, partial = "tensordot-product-" + tok;
  auto multiply = [c](const ValueList& pairs) { return multiply_blocks(c, pairs); };
  const size_t per_leaf = static_cast<size_t>(split_every);
  Graph layer;
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    // The tree's leaves: each sums up to split_every block products in place.
    std::vector<Key> level;
    ArgList pairs;
    auto add_leaf = [&] {
      std::vector<int64_t> key(idx.begin(), idx.end());
      key.push_back(static_cast<int64_t>(level.size()));
      level.emplace_back(partial, key);
      layer.put(level.back(), Task(fn("tensordot", multiply), std::move(pairs)));
      pairs = ArgList{};
    };
    for_each_index(inner, [&](std::span<const int64_t> kc) {
      std::vector<int64_t> ia(a.ndim()), ib(b.ndim());
      for (size_t i = 0; i < free_a.size(); ++i) ia[free_a[i]] = idx[i];
      for (size_t i = 0; i < free_b.size(); ++i) ib[free_b[i]] = idx[free_a.size() + i];
      for (size_t i = 0; i < ca.size(); ++i) ia[ca[i]] = ib[cb[i]] = kc[i];
      pairs.items.emplace_back(ref(a.block_key(ia)));
      pairs.items.emplace_back(ref(b.block_key(ib)));
      if (pairs.items.size() == 2 * per_leaf) add_leaf();
    });
    if (!pairs.items.empty()) add_leaf();
    if (level.empty()) {  // no contracted blocks (an axis of length 0): zeros
      Shape shape = chunks.block_shape(std::vector<int64_t>(idx.begin(), idx.end()));
      auto zeros = [shape, dtype = c.dtype] { return NDArray::zeros(dtype, shape); };
      layer.put(Key(out, idx), Task(fn("zeros", zeros)));
      return;
    }
    for (int depth = 1; level.size() > 1; ++depth) {
      std::vector<Key> next;
      for (size_t i = 0; i < level.size(); i += static_cast<size_t>(split_every)) {
        ArgList parts;
        const size_t end = std::min(level.size(), i + static_cast<size_t>(split_every));
        for (size_t p = i; p < end; ++p) parts.items.emplace_back(ref(level[p]));
        std::vector<int64_t> key(idx.begin(), idx.end());
        key.push_back(static_cast<int64_t>(next.size()));
        next.emplace_back(absl::StrCat(partial, "-", depth), key);
        layer.put(next.back(), Task(fn("tensordot-sum", add_blocks), std::move(parts)));
      }
      level = std::move(next);
    }
    layer.alias(Key(out, idx), level.front());
  });
  return Array(out, chunks, c.dtype, std::move(layer), {a, b});
}

Array dot(const Array& a, const Array& b) {
  if (a.ndim() == 0 || b.ndim() == 0) return a * b;
  const int right = b.ndim() >= 2 ? static_cast<int>(b.ndim()) - 2 : 0;
  return tensordot(a, b, {{static_cast<int>(a.ndim()) - 1}, {right}});
}

Array matmul(const Array& a, const Array& b) {
  if (a.ndim() == 0 || b.ndim() == 0) {
    throw Error("matmul: 0-d operands are not allowed (use multiply, the `*` operator)");
  }
  if (a.ndim() > 2 || b.ndim() > 2) {
    throw Error(absl::StrCat("matmul: batched products (operands of more than 2 dimensions, here ", a.ndim(), " and ",
                             b.ndim(), ") are not supported; use tensordot"));
  }
  if (a.shape().back() != b.shape()[0]) {
    throw Error(absl::StrCat("matmul: the last axis of the first operand (", shape_str(a.shape()),
                             ") does not match the first axis of the second (", shape_str(b.shape()), ")"));
  }
  return dot(a, b);
}

}  // namespace tessera::array
