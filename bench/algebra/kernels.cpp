// The block kernels of tessera's array operations beside the Eigen Tensor
// expression over the same block memory (TensorMaps of the NDArrays), one
// thread, best of `repeats`. The design's rule: a kernel is the Eigen
// expression unless the hand-written one is at least 1.2x faster; these rows
// are the evidence for each kernel either way.
//
// tessera's side is the operation as a user calls it on a one-block array
// (the graph's cost is microseconds beside a block's milliseconds), so a row
// times whatever kernel the library runs today; the Eigen side allocates its
// output block too, as the library must. Each row prints:
//   kernel add_float32_2048 tessera=0.012 eigen=0.011 same=1
#include "kernels.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <functional>
#include <string>

#include "tessera/array/core/tensor.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/logic.hpp"
#include "tessera/array/ops/reductions.hpp"

namespace ta = tessera::array;

double best_of(int repeats, const std::function<void()>& f) {
  double best = 1e300;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = std::chrono::steady_clock::now();
    f();
    best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  return best;
}

namespace {

// Equal within float rounding (sums add in another order).
bool same(const ta::NDArray& a, const ta::NDArray& b) {
  if (a.shape() != b.shape()) return false;
  if (a.dtype() == ta::DType::bool_() || a.dtype() == ta::DType::int64()) {
    return a.dtype() == b.dtype() && ta::array_equal(a, ta::c_contiguous(b));
  }
  const ta::NDArray x = a.astype(ta::DType::float64()), y = b.astype(ta::DType::float64());
  const double* p = x.data<const double>();
  const double* q = y.data<const double>();
  for (int64_t i = 0; i < x.size(); ++i) {
    if (std::abs(p[i] - q[i]) > 1e-5 * std::max(1.0, std::abs(q[i]))) return false;
  }
  return true;
}

// A fresh block of R with `dims`, the Eigen expression evaluated into it.
template <class R, int N, class Expr>
ta::NDArray eval(const std::array<Eigen::Index, N>& dims, const Expr& e) {
  ta::NDArray out = ta::NDArray::empty(ta::dtype_of<R>, ta::Shape(dims.begin(), dims.end()));
  out.tensor<R, N>() = e;
  return out;
}

template <class T>
void rows(const ta::Array& x, int repeats) {
  const ta::NDArray block = x.compute();
  const auto a = block.tensor<const T, 2>();
  const int64_t n = block.shape()[0];
  const std::array<Eigen::Index, 2> dims2{a.dimension(0), a.dimension(1)};
  const std::array<Eigen::Index, 1> dims1{a.dimension(1)};
  const std::array<Eigen::Index, 0> dims0{};
  const std::array<Eigen::Index, 1> axis0{0}, axis1{1};
  const T half = T(0.5);
  const ta::NDArray mask_block = ta::greater(x, ta::Scalar(half)).compute();
  const ta::Array mask = ta::from_ndarray(mask_block, {n, n});
  const auto m = mask_block.tensor<const bool, 2>();
  const ta::Array zero = ta::from_ndarray(ta::NDArray::zeros(ta::dtype_of<T>, {}));
  auto row = [&](const std::string& what, const std::function<ta::NDArray()>& tessera,
                 const std::function<ta::NDArray()>& eigen) {
    ta::NDArray mine, theirs;
    const double t_tessera = best_of(repeats, [&] { mine = tessera(); });
    const double t_eigen = best_of(repeats, [&] { theirs = eigen(); });
    std::printf("kernel %s_%s_%lld tessera=%.6f eigen=%.6f same=%d\n", what.c_str(),
                std::string(ta::dtype_of<T>.name()).c_str(), static_cast<long long>(n), t_tessera, t_eigen,
                same(mine, theirs) ? 1 : 0);
    std::fflush(stdout);
  };
  const ta::ComputeOptions one{.num_workers = 1};
  // Element-wise, between blocks and with a scalar.
  row("add", [&] { return (x + x).compute(one); }, [&] { return eval<T, 2>(dims2, a + a); });
  row("multiply_scalar", [&] { return (x * ta::Scalar(half)).compute(one); },
      [&] { return eval<T, 2>(dims2, a * a.constant(half)); });
  row("greater_scalar", [&] { return ta::greater(x, ta::Scalar(half)).compute(one); },
      [&] { return eval<bool, 2>(dims2, a > a.constant(half)); });
  row("where_mask", [&] { return ta::where(mask, x, zero).compute(one); },
      [&] { return eval<T, 2>(dims2, m.select(a, a.constant(T(0)))); });
  row("isnan", [&] { return ta::isnan(x).compute(one); },
      [&] { return eval<bool, 2>(dims2, a.unaryExpr([](T v) { return std::isnan(v); })); });
  row("astype_float64", [&] { return ta::astype(x, ta::DType::float64()).compute(one); },
      [&] { return eval<double, 2>(dims2, a.template cast<double>()); });
  // Reductions: float sums accumulate in double (as tessera's do).
  row("sum_all", [&] { return ta::sum(x).compute(one); },
      [&] { return eval<T, 0>(dims0, a.template cast<double>().sum().template cast<T>()); });
  row("sum_axis0", [&] { return ta::sum(x, {.axis = {0}}).compute(one); },
      [&] { return eval<T, 1>(dims1, a.template cast<double>().sum(axis0).template cast<T>()); });
  row("sum_axis1", [&] { return ta::sum(x, {.axis = {1}}).compute(one); },
      [&] { return eval<T, 1>(dims1, a.template cast<double>().sum(axis1).template cast<T>()); });
  row("max_axis0", [&] { return ta::max(x, {.axis = {0}}).compute(one); },
      [&] { return eval<T, 1>(dims1, a.template maximum<std::array<Eigen::Index, 1>, Eigen::PropagateNaN>(axis0)); });
  row("max_axis1", [&] { return ta::max(x, {.axis = {1}}).compute(one); },
      [&] { return eval<T, 1>(dims1, a.template maximum<std::array<Eigen::Index, 1>, Eigen::PropagateNaN>(axis1)); });
  row("argmax_axis0", [&] { return ta::argmax(x, {.axis = {0}, .split_every = 8}).compute(one); },
      [&] { return eval<int64_t, 1>(dims1, a.argmax(0).template cast<int64_t>()); });
  row("argmax_axis1", [&] { return ta::argmax(x, {.axis = {1}, .split_every = 8}).compute(one); },
      [&] { return eval<int64_t, 1>(dims1, a.argmax(1).template cast<int64_t>()); });
  // A block transposed into C order: the strided copy NDArray::copy makes.
  const std::array<int, 2> swap{1, 0};
  row("transpose_copy", [&] { return block.transpose().copy(); }, [&] { return eval<T, 2>(dims2, a.shuffle(swap)); });
}

}  // namespace

void print_kernel_rows(const ta::Array& one_f32, const ta::Array& one_f64, int repeats) {
  rows<float>(one_f32, repeats);
  rows<double>(one_f64, repeats);
}
