// FFTs of Arrays: the per-block kernel, and the layers that make each
// transformed axis one chunk before transforming block by block.
//
// A block is seen as (outer, m, inner): the transformed axis between the axes
// before it and after it. Lengths whose prime factors are at most 13 go to
// fft_lanes.hpp's kernel, several lines at once, one per SIMD lane (faster than
// kissfft line by line, and strided lines need no separate transpose) but
// where fft_kernel_for says otherwise. Other lengths, and irfft, go line by
// line through Eigen's FFT module: when inner is 1 each line is contiguous and
// goes to the FFT as it lies. Otherwise lines are
// strided, and reading them one by one would touch one cache line per element;
// the kernel gathers a panel of kPanel neighbouring lines at once (each row of
// the panel one contiguous run), transforms them, and scatters them back the
// same way.
#include "tessera/array/ops/fft.hpp"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstring>
#include <map>
#include <numbers>
#include <string>
#include <type_traits>
#include <vector>

#include <absl/strings/str_cat.h>
#include <unsupported/Eigen/FFT>

#include "array/block.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/core/grid.hpp"
#include "array/ops/axes.hpp"
#include "array/ops/fft_kernel.hpp"
#include "array/ops/fft_lanes.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

constexpr int64_t kPanel = 16;

std::string_view kind_name(FftKind kind) {
  switch (kind) {
    case FftKind::forward: return "fft";
    case FftKind::inverse: return "ifft";
    case FftKind::real: return "rfft";
    case FftKind::inverse_real: break;
  }
  return "irfft";
}

bool is_single(DType d) { return d == DType::float32() || d == DType::complex64(); }

// The dtype the kernel reads: real for rfft, complex otherwise, of the result's precision.
DType work_dtype(FftKind kind, DType in) {
  const bool single = is_single(in);
  if (kind == FftKind::real) return single ? DType::float32() : DType::float64();
  return single ? DType::complex64() : DType::complex128();
}

// Extent of the output along the axis.
int64_t output_length(FftKind kind, int64_t n) { return kind == FftKind::real ? n / 2 + 1 : n; }
// How many input points a line's transform reads.
int64_t input_points(FftKind kind, int64_t n) { return kind == FftKind::inverse_real ? n / 2 + 1 : n; }

template <class R>
R scale_of(FftKind kind, FftNorm norm, int64_t n) {
  const bool inverse = kind == FftKind::inverse || kind == FftKind::inverse_real;
  switch (norm) {
    case FftNorm::ortho: return static_cast<R>(1.0 / std::sqrt(static_cast<double>(n)));
    case FftNorm::forward: return inverse ? R(1) : static_cast<R>(1.0 / static_cast<double>(n));
    case FftNorm::backward: break;
  }
  return inverse ? static_cast<R>(1.0 / static_cast<double>(n)) : R(1);
}

// One line's transform: `in` holds input_points(kind, n) values (cropped or
// zero-padded already), `out` receives output_length(kind, n).
template <class R>
struct LineFft {
  using C = std::complex<R>;
  Eigen::FFT<R> fft;
  FftKind kind;
  int64_t n;
  R scale;

  LineFft(FftKind k, int64_t points, FftNorm norm) : kind(k), n(points), scale(scale_of<R>(k, norm, points)) {
    fft.SetFlag(Eigen::FFT<R>::Unscaled);
    fft.SetFlag(Eigen::FFT<R>::HalfSpectrum);
  }

  void transform(const void* in, void* out) {
    switch (kind) {
      case FftKind::forward: fft.fwd(static_cast<C*>(out), static_cast<const C*>(in), n); break;
      case FftKind::inverse: fft.inv(static_cast<C*>(out), static_cast<const C*>(in), n); break;
      case FftKind::real: fft.fwd(static_cast<C*>(out), static_cast<const R*>(in), n); break;
      case FftKind::inverse_real: fft.inv(static_cast<R*>(out), static_cast<const C*>(in), n); break;
    }
  }

  void copy_one(const void* in, void* out) const {
    if (kind == FftKind::real) {
      *static_cast<C*>(out) = C(*static_cast<const R*>(in), R(0));
    } else if (kind == FftKind::inverse_real) {
      *static_cast<R*>(out) = static_cast<const C*>(in)->real();
    } else {
      *static_cast<C*>(out) = *static_cast<const C*>(in);
    }
  }

  // `in` is R* for `real`, C* otherwise; `out` is R* for `inverse_real`, C* otherwise.
  void operator()(const void* in, void* out) {
    const int64_t len = output_length(kind, n);
    if (n == 1) {
      copy_one(in, out);  // Eigen's kissfft has no plan of length 1 (its radix-1 stage reads past a buffer)
    } else {
      transform(in, out);
    }
    if (scale != R(1)) {
      if (kind == FftKind::inverse_real) {
        R* p = static_cast<R*>(out);
        for (int64_t i = 0; i < len; ++i) p[i] *= scale;
      } else {
        C* p = static_cast<C*>(out);
        for (int64_t i = 0; i < len; ++i) p[i] *= scale;
      }
    }
  }
};

// The lines of a block seen as (outer, m, inner), the axis in the middle: line
// t = o inner + j starts at o m inner + j in the input, o len inner + j in the
// output, and its points are `inner` apart in both.
struct Lines {
  int64_t outer, m, inner, len;
  int64_t count() const { return outer * inner; }
  int64_t in_start(int64_t t) const { return (t / inner) * m * inner + t % inner; }
  int64_t out_start(int64_t t) const { return (t / inner) * len * inner + t % inner; }
};

// How the lane kernel takes a transform of `kind` with n points: not at all
// (irfft, and lengths with a prime factor LaneFft lacks: kissfft's), as n
// complex points, or (a real forward transform of even n) packed as n / 2.
enum class LaneForm { none, complex, packed };
LaneForm lane_form(FftKind kind, int64_t n) {
  using Lanes = detail::LaneFft<float>;  // the same lengths in either precision
  if (kind == FftKind::inverse_real) return LaneForm::none;
  if (kind == FftKind::real && n % 2 == 0 && Lanes::supports(n / 2)) return LaneForm::packed;
  return Lanes::supports(n) ? LaneForm::complex : LaneForm::none;
}

// Transforms every line with LaneFft, kLanes lines at a time (one per lane):
// each panel gathers its lines' points into split real and imaginary planes,
// runs the passes there and scatters the scaled result. A real forward
// transform of even n packs x[2k] + i x[2k+1] into a complex line of n / 2
// points and untangles the two halves after. Returns false, doing nothing,
// where lane_form says the lanes do not take the transform.
template <class R, class In, class Out>
bool transform_in_lanes(const In* src, Out* dst, const Lines& lines, FftKind kind, int64_t n, int64_t copied, R scale) {
  using Plan = detail::LaneFft<R>;
  using V = typename Plan::V;
  constexpr int64_t L = Plan::kLanes;
  const LaneForm form = lane_form(kind, n);
  if (form == LaneForm::none) return false;
  const bool packed = form == LaneForm::packed;
  const int64_t size = packed ? n / 2 : n;
  const Plan plan(size, kind == FftKind::inverse);
  // The planes hold n points (packed: n / 2 + 1 untangled ones) of L lanes.
  const auto planes = static_cast<size_t>(std::max<int64_t>(n, 2));
  std::vector<V> re(planes), im(planes), work_re(planes), work_im(planes);
  R* pr = reinterpret_cast<R*>(re.data());  // vector types alias their element type
  R* pi = reinterpret_cast<R*>(im.data());
  // Twiddles of the untangling: w_n^k for k <= n / 2.
  std::vector<R> tw_re, tw_im;
  if (packed) {
    for (int64_t k = 0; k <= size; ++k) {
      const double a = -2 * std::numbers::pi * static_cast<double>(k) / static_cast<double>(n);
      tw_re.push_back(static_cast<R>(std::cos(a)));
      tw_im.push_back(static_cast<R>(std::sin(a)));
    }
  }
  const int64_t inner = lines.inner;
  int64_t in_start[L], out_start[L];
  for (int64_t t0 = 0; t0 < lines.count(); t0 += L) {
    const int64_t w = std::min(L, lines.count() - t0);
    for (int64_t l = 0; l < w; ++l) {
      in_start[l] = lines.in_start(t0 + l);
      out_start[l] = lines.out_start(t0 + l);
    }
    // Lanes past w (a last, narrower panel) and points past `copied` (zero
    // padding) are zeros; the planes hold the previous panel's values.
    // Real input not packed reads no imaginary parts at all.
    const int64_t first_unread = w < L ? 0 : packed ? copied / 2 : copied;
    const bool real_only = std::is_same_v<In, R> && !packed;
    std::fill(re.begin() + first_unread, re.begin() + size, V{});
    std::fill(im.begin() + (real_only ? 0 : first_unread), im.begin() + size, V{});
    // The lanes' points: by their table, or (a panel of neighbouring columns)
    // one run from the first; a full panel's lane count is a constant, so the
    // moves unroll.
    auto by_table = [&](const int64_t* start) { return [start](int64_t l) { return start[l]; }; };
    auto by_run = [&](const int64_t* start) { return [first = start[0]](int64_t l) { return first + l; }; };
    // Strided lines: a panel reads a few bytes of every row, each on a new page
    // where the hardware prefetcher does not follow, so each read would wait
    // for memory; asking kAhead rows ahead overlaps those waits.
    constexpr int64_t kAhead = 8;
    const bool strided = inner > 1;
    auto gather = [&](auto lane_at, auto lanes) {
      for (int64_t i = 0; i < copied; ++i) {
        const In* p = src + i * inner;
        if (strided && i + kAhead < copied) {
          __builtin_prefetch(p + kAhead * inner + lane_at(0));
          __builtin_prefetch(p + kAhead * inner + lane_at(lanes - 1));
        }
        if constexpr (std::is_same_v<In, R>) {
          R* plane = (packed && i % 2 ? pi : pr) + (packed ? i / 2 : i) * L;
          for (int64_t l = 0; l < lanes; ++l) plane[l] = p[lane_at(l)];
        } else {
          for (int64_t l = 0; l < lanes; ++l) {
            pr[i * L + l] = p[lane_at(l)].real();
            pi[i * L + l] = p[lane_at(l)].imag();
          }
        }
      }
    };
    // Calls move(lane_at, lanes) with the lanes' positions from `start`.
    auto over_lanes = [&](const int64_t* start, auto move) {
      const std::integral_constant<int64_t, L> all;
      if (w < L) {
        move(by_table(start), w);
      } else if (start[L - 1] - start[0] == L - 1) {
        move(by_run(start), all);
      } else {
        move(by_table(start), all);
      }
    };
    over_lanes(in_start, gather);
    auto [yr, yi] = plan.run(re.data(), im.data(), work_re.data(), work_im.data());
    if (packed) {
      // Z = FFT(z): X[k] = E + w_n^k O with E = (Z[k] + conj Z[h-k]) / 2 and
      // O = -i (Z[k] - conj Z[h-k]) / 2, indices mod h; written to the other planes.
      V* xr = yr == re.data() ? work_re.data() : re.data();
      V* xi = yr == re.data() ? work_im.data() : im.data();
      const R half = R(0.5);
      for (int64_t k = 0; k <= size; ++k) {
        const int64_t a = k % size, b = (size - k) % size;
        const V er = (yr[a] + yr[b]) * half, ei = (yi[a] - yi[b]) * half;
        const V or_ = (yi[a] + yi[b]) * half, oi = (yr[b] - yr[a]) * half;
        xr[k] = er + or_ * tw_re[k] - oi * tw_im[k];
        xi[k] = ei + or_ * tw_im[k] + oi * tw_re[k];
      }
      yr = xr;
      yi = xi;
    }
    const R* outr = reinterpret_cast<const R*>(yr);
    const R* outi = reinterpret_cast<const R*>(yi);
    auto scatter = [&](auto lane_at, auto lanes) {
      for (int64_t k = 0; k < lines.len; ++k) {
        Out* p = dst + k * inner;
        if (strided && k + kAhead < lines.len) {
          __builtin_prefetch(p + kAhead * inner + lane_at(0), 1);
          __builtin_prefetch(p + kAhead * inner + lane_at(lanes - 1), 1);
        }
        for (int64_t l = 0; l < lanes; ++l) p[lane_at(l)] = Out(outr[k * L + l] * scale, outi[k * L + l] * scale);
      }
    };
    over_lanes(out_start, scatter);
  }
  return true;
}

// Transforms every line of `in` (C-contiguous, of type In) along `axis` into
// `out` (C-contiguous, of type Out). The element types are template parameters
// so the panels' gathers and scatters are plain typed moves.
template <class R, class In, class Out>
void transform_lines(const NDArray& in, const NDArray& out, FftKind kind, size_t axis, int64_t n, FftNorm norm,
                     detail::FftKernel kernel) {
  const Shape& shape = in.shape();
  int64_t outer = 1, inner = 1;
  for (size_t k = 0; k < axis; ++k) outer *= shape[k];
  for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
  const int64_t m = shape[axis], len = output_length(kind, n), points = input_points(kind, n);
  const int64_t copied = std::min(m, points);
  const auto* src = reinterpret_cast<const In*>(in.data());
  auto* dst = reinterpret_cast<Out*>(out.data());
  if (outer * inner == 0) return;
  if (kernel == detail::FftKernel::automatic) kernel = detail::fft_kernel_for(kind, in.dtype(), n, shape, axis);
  if constexpr (!std::is_same_v<Out, R>) {  // real output is irfft's, which the lanes do not take
    if (kernel == detail::FftKernel::lanes &&
        transform_in_lanes<R, In, Out>(src, dst, Lines{outer, m, inner, len}, kind, n, copied,
                                       scale_of<R>(kind, norm, n))) {
      return;
    }
  }
  LineFft<R> line(kind, n, norm);
  const int64_t panel = inner == 1 ? 1 : std::min(kPanel, inner);
  // Panel buffers: `panel` input lines of `points` values, output lines of `len`.
  std::vector<In> a(static_cast<size_t>(panel * points), In(0));
  std::vector<Out> b(static_cast<size_t>(panel * len));
  for (int64_t o = 0; o < outer; ++o) {
    const In* src_o = src + o * m * inner;
    Out* dst_o = dst + o * len * inner;
    for (int64_t j0 = 0; j0 < inner; j0 += panel) {
      const int64_t w = std::min(panel, inner - j0);
      if (inner == 1 && copied == points) {
        line(src_o, dst_o);  // contiguous and full: transform in place of reading
        continue;
      }
      for (int64_t i = 0; i < copied; ++i) {
        const In* row = src_o + i * inner + j0;
        for (int64_t l = 0; l < w; ++l) a[static_cast<size_t>(l * points + i)] = row[l];
      }
      // Zero padding stays zero: rows past `copied` are never written.
      for (int64_t l = 0; l < w; ++l) line(a.data() + l * points, b.data() + l * len);
      for (int64_t k = 0; k < len; ++k) {
        Out* row = dst_o + k * inner + j0;
        for (int64_t l = 0; l < w; ++l) row[l] = b[static_cast<size_t>(l * len + k)];
      }
    }
  }
}

template <class R>
void transform_lines(const NDArray& in, const NDArray& out, FftKind kind, size_t axis, int64_t n, FftNorm norm,
                     detail::FftKernel kernel) {
  using C = std::complex<R>;
  switch (kind) {
    case FftKind::real: return transform_lines<R, R, C>(in, out, kind, axis, n, norm, kernel);
    case FftKind::inverse_real: return transform_lines<R, C, R>(in, out, kind, axis, n, norm, kernel);
    case FftKind::forward:
    case FftKind::inverse: break;
  }
  transform_lines<R, C, C>(in, out, kind, axis, n, norm, kernel);
}

Array transform(const Array& x, FftKind kind, const FftOptions& o) {
  const std::string what(kind_name(kind));
  if (kind == FftKind::real && x.dtype().is_complex()) {
    throw TypeError(absl::StrCat("rfft needs real input, found ", x.dtype().name(), "; use fft for complex data"));
  }
  if (x.ndim() == 0) throw Error(absl::StrCat(what, ": needs an array of at least one dimension, found a 0-d array"));
  const size_t axis = detail::axis_index(o.axis, x.ndim(), what);
  const int64_t m = x.shape()[axis];
  const int64_t n = o.n.value_or(kind == FftKind::inverse_real ? 2 * (m - 1) : m);
  if (n < 1) {
    throw Error(absl::StrCat(what, ": invalid number of data points (", n, ") along axis ", axis,
                             " of length ", m, "; expected at least 1"));
  }
  const Array whole = rechunk(x, std::map<size_t, AxisChunks>{{axis, AxisChunks(-1)}}, o.rechunk);
  std::vector<std::vector<int64_t>> sizes = whole.chunks().sizes();
  sizes[axis] = {output_length(kind, n)};
  const Chunks chunks(std::move(sizes));
  const DType out_dtype = fft_result_dtype(kind, x.dtype());
  const std::string name(what);
  const std::string norm_text = std::to_string(static_cast<int>(o.norm));
  const std::string out =
      absl::StrCat(name, "-", token({name, whole.name(), std::to_string(axis), std::to_string(n), norm_text}));
  Graph layer;
  const FftNorm norm = o.norm;
  auto f = [kind, axis, n, norm, out_dtype](const NDArray& b) { return fft_block(b, kind, axis, n, norm, out_dtype); };
  for_each_block(chunks, [&](std::span<const int64_t> idx) {
    layer.put(Key(out, idx), Task(fn(name, f), ref(whole.block_key(idx))));
  });
  return Array(out, chunks, out_dtype, std::move(layer), {whole});
}

std::vector<int> axes_or(const FftNOptions& o, size_t ndim, std::vector<int> fallback, const std::string& what) {
  std::vector<int> axes = o.axes.value_or(std::move(fallback));
  for (int& a : axes) a = static_cast<int>(detail::axis_index(a, ndim, what));
  return axes;
}

std::vector<int> all_axes(size_t ndim) {
  std::vector<int> axes(ndim);
  for (size_t k = 0; k < ndim; ++k) axes[k] = static_cast<int>(k);
  return axes;
}

std::vector<int> last_two(const Array& x, const std::string& what) {
  if (x.ndim() < 2) {
    throw Error(absl::StrCat(what, ": needs an array of at least two dimensions, found ", x.ndim()));
  }
  return {-2, -1};
}

Array transform_axes(Array x, FftKind kind, const std::vector<int>& axes, const FftNOptions& o) {
  for (int a : axes) x = transform(x, kind, {.axis = a, .norm = o.norm, .rechunk = o.rechunk});
  return x;
}

}  // namespace

DType fft_result_dtype(FftKind kind, DType in) {
  const bool single = is_single(in);
  if (kind == FftKind::inverse_real) return single ? DType::float32() : DType::float64();
  return single ? DType::complex64() : DType::complex128();
}

// The lanes unless bench/fft finds them short of the 1.2x margin a hand-written
// kernel must keep over Eigen's: real double-precision rows lying contiguous
// (two lanes wide, and a transpose to gather them) whose length mixes the
// radices 4, 3 and 5 and no larger prime, where kissfft has butterflies of its own.
detail::FftKernel detail::fft_kernel_for(FftKind kind, DType dtype, int64_t n, const Shape& shape, size_t axis) {
  if (lane_form(kind, n) == LaneForm::none) return FftKernel::eigen;
  int64_t inner = 1;
  for (size_t k = axis + 1; k < shape.size(); ++k) inner *= shape[k];
  int64_t rest = n;
  for (int64_t p : {2, 3, 5}) {
    while (rest % p == 0) rest /= p;
  }
  const bool kissfft_radices = rest == 1 && n % 60 == 0;
  if (kind == FftKind::real && !is_single(dtype) && inner == 1 && kissfft_radices) return FftKernel::eigen;
  return FftKernel::lanes;
}

NDArray detail::fft_block_with(const NDArray& block, FftKind kind, size_t axis, int64_t n, FftNorm norm,
                               DType out_dtype, FftKernel kernel) {
  const DType work = work_dtype(kind, block.dtype());
  const NDArray in = block.dtype() == work ? (block.is_c_contiguous() ? block : block.copy()) : block.astype(work);
  Shape shape = block.shape();
  shape[axis] = output_length(kind, n);
  NDArray out = NDArray::empty(fft_result_dtype(kind, block.dtype()), shape);
  if (is_single(work)) {
    transform_lines<float>(in, out, kind, axis, n, norm, kernel);
  } else {
    transform_lines<double>(in, out, kind, axis, n, norm, kernel);
  }
  return out.dtype() == out_dtype ? out : out.astype(out_dtype);
}

NDArray fft_block(const NDArray& block, FftKind kind, size_t axis, int64_t n, FftNorm norm, DType out_dtype) {
  return detail::fft_block_with(block, kind, axis, n, norm, out_dtype, detail::FftKernel::automatic);
}

Array fft(const Array& x, const FftOptions& options) { return transform(x, FftKind::forward, options); }
Array ifft(const Array& x, const FftOptions& options) { return transform(x, FftKind::inverse, options); }
Array rfft(const Array& x, const FftOptions& options) { return transform(x, FftKind::real, options); }
Array irfft(const Array& x, const FftOptions& options) { return transform(x, FftKind::inverse_real, options); }

Array fftn(const Array& x, const FftNOptions& options) {
  return transform_axes(x, FftKind::forward, axes_or(options, x.ndim(), all_axes(x.ndim()), "fftn"), options);
}

Array ifftn(const Array& x, const FftNOptions& options) {
  return transform_axes(x, FftKind::inverse, axes_or(options, x.ndim(), all_axes(x.ndim()), "ifftn"), options);
}

Array rfftn(const Array& x, const FftNOptions& options) {
  std::vector<int> axes = axes_or(options, x.ndim(), all_axes(x.ndim()), "rfftn");
  if (axes.empty()) throw Error("rfftn: needs at least one axis, found none");
  const int last = axes.back();
  axes.pop_back();
  return transform_axes(transform(x, FftKind::real, {.axis = last, .norm = options.norm, .rechunk = options.rechunk}),
                        FftKind::forward, axes, options);
}

Array fft2(const Array& x, const FftNOptions& options) {
  FftNOptions o = options;
  if (!o.axes) o.axes = last_two(x, "fft2");
  return fftn(x, o);
}

Array ifft2(const Array& x, const FftNOptions& options) {
  FftNOptions o = options;
  if (!o.axes) o.axes = last_two(x, "ifft2");
  return ifftn(x, o);
}

Array rfft2(const Array& x, const FftNOptions& options) {
  FftNOptions o = options;
  if (!o.axes) o.axes = last_two(x, "rfft2");
  return rfftn(x, o);
}

}  // namespace tessera::array
