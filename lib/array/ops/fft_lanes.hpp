// FFTs of several lines at once, one line per lane of a SIMD vector.
//
// kissfft (fft.cpp's line-by-line path) transforms one line at a time: a
// column of a row-major block is strided, so each one had to be gathered into a
// buffer and scattered back, and the butterflies of one line do not vectorize.
// Here lane l of every vector belongs to line l: point i of all the lines is one
// vector, so a butterfly is plain lane-wise arithmetic with no shuffles, and
// gathering a panel of neighbouring columns reads runs of neighbouring values.
//
// The passes are Stockham's autosort form (decimation in frequency): each pass
// reads one buffer and writes the other in order, so no bit-reversal pass is
// needed. A pass of radix p over a sub-transform of length N = p m, with s
// sub-transforms side by side, computes for every pp < m, q < s
//
//   y[q + s (p pp + t)] = w_N^(pp t) * sum_r x[q + s (pp + r m)] w_p^(r t),   t < p
//
// and the next pass works on length m with s p side by side. Radices are 4, 2
// and the primes up to kMaxRadix (a butterfly of radix p costs about p^2 / 2
// lane-wise multiply-adds, bounded by the constant); a length with a larger prime factor
// is not handled here and stays on kissfft.
#pragma once

#include <cmath>
#include <cstdint>
#include <numbers>
#include <utility>
#include <vector>

namespace tessera::array::detail {

template <class R>
struct LaneVector;
// 16 bytes: one SSE register (the build targets generic x86-64, where the
// compiler splits 32-byte vectors without -mavx, and bench/fft ran them slower);
// 4 single or 2 double lines at once.
template <>
struct LaneVector<float> {
  typedef float type __attribute__((vector_size(16)));
};
template <>
struct LaneVector<double> {
  typedef double type __attribute__((vector_size(16)));
};

template <class R>
class LaneFft {
 public:
  using V = typename LaneVector<R>::type;
  static constexpr int64_t kLanes = sizeof(V) / sizeof(R);
  static constexpr int kMaxRadix = 13;

  //! Whether n's prime factors are all at most kMaxRadix.
  static bool supports(int64_t n) { return n == 1 || (n > 1 && !radices(n).empty()); }

  //! The plan of a forward (or, `inverse`, unscaled backward) complex transform of length n; supports(n).
  LaneFft(int64_t n, bool inverse) : n_(n), sign_(inverse ? 1.0 : -1.0) {
    int64_t len = n;
    int64_t s = 1;
    for (int p : radices(n)) {
      const int64_t m = len / p;
      Stage st{p, m, s, twiddle_re_.size(), root_re_.size()};
      for (int64_t pp = 0; pp < m; ++pp) {
        for (int t = 0; t < p; ++t) {
          const double a =
              sign_ * 2 * std::numbers::pi * static_cast<double>((pp * t) % len) / static_cast<double>(len);
          twiddle_re_.push_back(static_cast<R>(std::cos(a)));
          twiddle_im_.push_back(static_cast<R>(std::sin(a)));
        }
      }
      for (int k = 0; k < p; ++k) {
        const double a = sign_ * 2 * std::numbers::pi * k / p;
        root_re_.push_back(static_cast<R>(std::cos(a)));
        root_im_.push_back(static_cast<R>(std::sin(a)));
      }
      stages_.push_back(st);
      len = m;
      s *= p;
    }
  }

  int64_t size() const { return n_; }

  //! Transforms the n points in (re, im), n vectors each; (work_re, work_im) are n
  //! vectors of scratch. Returns the pair that holds the result (the input's or the work's).
  std::pair<V*, V*> run(V* re, V* im, V* work_re, V* work_im) const {
    for (const Stage& st : stages_) {
      pass(st, re, im, work_re, work_im);
      std::swap(re, work_re);
      std::swap(im, work_im);
    }
    return {re, im};
  }

 private:
  struct Stage {
    int p;
    int64_t m, s;
    size_t twiddle, root;  // offsets into the tables
  };

  // 4s first (the fewest passes), then the primes in order; empty for 1 (no pass) and when a factor is too large.
  static std::vector<int> radices(int64_t n) {
    std::vector<int> out;
    while (n % 4 == 0) {
      out.push_back(4);
      n /= 4;
    }
    for (int p : {2, 3, 5, 7, 11, 13}) {
      while (n % p == 0) {
        out.push_back(p);
        n /= p;
      }
    }
    if (n > 1) return {};
    return out;
  }

  void pass(const Stage& st, const V* xr, const V* xi, V* yr, V* yi) const {
    const int64_t m = st.m, s = st.s;
    const R* wr = twiddle_re_.data() + st.twiddle;
    const R* wi = twiddle_im_.data() + st.twiddle;
    for (int64_t pp = 0; pp < m; ++pp) {
      const V* ar = xr + s * pp;
      const V* ai = xi + s * pp;
      V* br = yr + s * st.p * pp;
      V* bi = yi + s * st.p * pp;
      const R* twr = wr + pp * st.p;
      const R* twi = wi + pp * st.p;
      switch (st.p) {
        case 4: radix4(ar, ai, br, bi, m * s, s, twr, twi); break;
        case 2: radix2(ar, ai, br, bi, m * s, s, twr, twi); break;
        case 3: radix_prime<3>(st, ar, ai, br, bi, m * s, s, twr, twi); break;
        case 5: radix_prime<5>(st, ar, ai, br, bi, m * s, s, twr, twi); break;
        case 7: radix_prime<7>(st, ar, ai, br, bi, m * s, s, twr, twi); break;
        case 11: radix_prime<11>(st, ar, ai, br, bi, m * s, s, twr, twi); break;
        default: radix_prime<13>(st, ar, ai, br, bi, m * s, s, twr, twi); break;
      }
    }
  }

  // y_t = t ? w_t * b : b, lane-wise (the twiddle of t = 0 is 1).
  static void store(V* yr, V* yi, V br, V bi, R wr, R wi) {
    *yr = br * wr - bi * wi;
    *yi = br * wi + bi * wr;
  }

  static void radix2(const V* ar, const V* ai, V* br, V* bi, int64_t stride, int64_t s, const R* wr, const R* wi) {
    for (int64_t q = 0; q < s; ++q) {
      const V a0r = ar[q], a0i = ai[q], a1r = ar[q + stride], a1i = ai[q + stride];
      br[q] = a0r + a1r;
      bi[q] = a0i + a1i;
      store(br + q + s, bi + q + s, a0r - a1r, a0i - a1i, wr[1], wi[1]);
    }
  }

  void radix4(const V* ar, const V* ai, V* br, V* bi, int64_t stride, int64_t s, const R* wr, const R* wi) const {
    const R g = static_cast<R>(-sign_);  // w_4 = -i forward, +i inverse: i g (x) = (-g x.im, g x.re)
    for (int64_t q = 0; q < s; ++q) {
      const V a0r = ar[q], a0i = ai[q];
      const V a1r = ar[q + stride], a1i = ai[q + stride];
      const V a2r = ar[q + 2 * stride], a2i = ai[q + 2 * stride];
      const V a3r = ar[q + 3 * stride], a3i = ai[q + 3 * stride];
      const V s02r = a0r + a2r, s02i = a0i + a2i, d02r = a0r - a2r, d02i = a0i - a2i;
      const V s13r = a1r + a3r, s13i = a1i + a3i, d13r = a1r - a3r, d13i = a1i - a3i;
      br[q] = s02r + s13r;
      bi[q] = s02i + s13i;
      // b1 = d02 + w_4 d13 = d02 - i g d13; b3 = d02 + i g d13.
      store(br + q + s, bi + q + s, d02r + g * d13i, d02i - g * d13r, wr[1], wi[1]);
      store(br + q + 2 * s, bi + q + 2 * s, s02r - s13r, s02i - s13i, wr[2], wi[2]);
      store(br + q + 3 * s, bi + q + 3 * s, d02r - g * d13i, d02i + g * d13r, wr[3], wi[3]);
    }
  }

  // Radix P (an odd prime), unrolled. The roots w^(r t) and w^((P-r) t) are
  // conjugates, so with u_r = a_r + a_(P-r) and d_r = a_r - a_(P-r) (r <= P/2)
  //   b_t = a_0 + sum_r Re(w^(r t)) u_r + i Im(w^(r t)) d_r,
  // and b_(P-t) is the same with the second sum negated: a quarter of the
  // multiplications of the plain sum.
  template <int P>
  void radix_prime(const Stage& st, const V* ar, const V* ai, V* br, V* bi, int64_t stride, int64_t s, const R* wr,
                   const R* wi) const {
    constexpr int H = P / 2;
    const R* rr = root_re_.data() + st.root;
    const R* ri = root_im_.data() + st.root;
    for (int64_t q = 0; q < s; ++q) {
      const V a0r = ar[q], a0i = ai[q];
      V ur[H + 1], ui[H + 1], dr[H + 1], di[H + 1];
      V sum_r = a0r, sum_i = a0i;
      for (int r = 1; r <= H; ++r) {
        const V xr = ar[q + r * stride], xi = ai[q + r * stride];
        const V yr = ar[q + (P - r) * stride], yi = ai[q + (P - r) * stride];
        ur[r] = xr + yr;
        ui[r] = xi + yi;
        dr[r] = xr - yr;
        di[r] = xi - yi;
        sum_r += ur[r];
        sum_i += ui[r];
      }
      br[q] = sum_r;
      bi[q] = sum_i;
      for (int t = 1; t <= H; ++t) {
        V er = a0r, ei = a0i, fr = V{}, fi = V{};
        for (int r = 1; r <= H; ++r) {
          const int k = (r * t) % P;
          er += ur[r] * rr[k];
          ei += ui[r] * rr[k];
          fr -= di[r] * ri[k];  // i Im(w) d = (-Im(w) d.im, Im(w) d.re)
          fi += dr[r] * ri[k];
        }
        store(br + q + t * s, bi + q + t * s, er + fr, ei + fi, wr[t], wi[t]);
        store(br + q + (P - t) * s, bi + q + (P - t) * s, er - fr, ei - fi, wr[P - t], wi[P - t]);
      }
    }
  }

  int64_t n_;
  double sign_;
  std::vector<Stage> stages_;
  std::vector<R> twiddle_re_, twiddle_im_;  // per stage, w_N^(pp t) for pp < m, t < p
  std::vector<R> root_re_, root_im_;        // per stage, w_p^k for k < p
};

}  // namespace tessera::array::detail
