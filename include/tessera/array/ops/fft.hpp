// tessera/array/ops/fft.hpp — discrete Fourier transforms of lazy Arrays, as numpy.fft.
//
// A transform along an axis needs the whole axis in one block, so each one
// first rechunks its axis to a single chunk (the other axes keep theirs: a
// graph rewrite, see rechunk.hpp) and then transforms every block on its own,
// one task per block. `fft2`/`fftn` do that axis after axis, which is how a
// transform larger than memory runs: rows first, then a rechunk from rows to
// columns, then columns. Lengths whose prime factors are at most 13 are
// transformed several lines at once, one per SIMD lane (Stockham passes of
// radix 4, 2, 3, 5, 7, 11, 13), where bench/fft shows that faster than Eigen's
// FFT by 1.2x or more; other lengths and irfft go through Eigen's FFT
// module (kissfft inside, BSD-licensed), whose generic butterfly costs n times
// the largest prime factor of n.
//
// Semantics are numpy's: `n` crops or zero-pads the input along the axis,
// `norm` is backward (the inverse divides by n), ortho (both by sqrt(n)) or
// forward (the forward divides by n); `rfft` returns the n/2 + 1 non-negative
// frequencies of real input and `irfft` inverts it (n defaults to 2(m - 1)).
// Result dtypes follow numpy 2: float32 and complex64 give complex64 (irfft:
// float32), every other dtype complex128 (irfft: float64).
//
// @code
//   namespace ta = tessera::array;
//   ta::Array x = ta::random({4096, 4096}, {256, -1}, 1, ta::DType::float32());
//   ta::Array f = ta::fft2(x);                     // complex64; rows, rechunk, columns
//   ta::Array h = ta::rfft(x, {.axis = 1});        // (4096, 2049)
//   ta::Array back = ta::irfft(h, {.n = 4096, .axis = 1});
// @endcode
//
// Thread-safe: these functions only build graphs; the tasks run concurrently.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "tessera/array/array.hpp"
#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/rechunk/plan.hpp"

namespace tessera::array {

//! numpy's `norm`: which direction is scaled.
enum class FftNorm {
  backward,  //!< the inverse divides by n (numpy's default)
  ortho,     //!< both directions divide by sqrt(n)
  forward,   //!< the forward transform divides by n
};

//! What a transform along one axis does.
struct FftOptions {
  //! Points along the axis: the input is cropped or zero-padded to n (default: the
  //! axis's length; for irfft 2 * (length - 1)).
  std::optional<int64_t> n = std::nullopt;
  //! The axis; negative counts from the end.
  int axis = -1;
  //! Which direction is scaled, as numpy's `norm`.
  FftNorm norm = FftNorm::backward;
  //! How the axis is made one chunk.
  RechunkOptions rechunk = {};
};

//! What a transform along several axes does.
struct FftNOptions {
  //! The axes (negative count from the end); default: every axis for fftn, the
  //! last two for fft2.
  std::optional<std::vector<int>> axes = std::nullopt;
  //! Which direction is scaled, as numpy's `norm`.
  FftNorm norm = FftNorm::backward;
  //! How each transformed axis is made one chunk.
  RechunkOptions rechunk = {};
};

//! The complex transform along `options.axis`. Error for an axis out of range
//! or n < 1.
Array fft(const Array& x, const FftOptions& options = {});
//! The inverse complex transform.
Array ifft(const Array& x, const FftOptions& options = {});
//! The transform of real input: n/2 + 1 non-negative frequencies. TypeError for complex input.
Array rfft(const Array& x, const FftOptions& options = {});
//! The inverse of rfft: n real points from the n/2 + 1 frequencies (fewer are
//! zero-padded, more are cropped).
Array irfft(const Array& x, const FftOptions& options = {});

//! fft along each of `options.axes` (all axes by default).
Array fftn(const Array& x, const FftNOptions& options = {});
//! ifft along each of `options.axes`.
Array ifftn(const Array& x, const FftNOptions& options = {});
//! rfft along the last of `options.axes`, then fft along the others.
Array rfftn(const Array& x, const FftNOptions& options = {});
//! fftn over the last two axes (or `options.axes`, two of them).
Array fft2(const Array& x, const FftNOptions& options = {});
//! ifftn over the last two axes.
Array ifft2(const Array& x, const FftNOptions& options = {});
//! rfftn over the last two axes.
Array rfft2(const Array& x, const FftNOptions& options = {});

//! The direction and kind of a one-axis transform (for the block kernel).
enum class FftKind {
  forward,   //!< complex to complex
  inverse,   //!< complex to complex, inverse
  real,      //!< real to half-spectrum complex
  inverse_real,  //!< half-spectrum complex to real
};

//! The block kernel: `block` transformed along `axis` with `n` points (the
//! output's extent along the axis is n, or n/2 + 1 for `real`), into a new
//! C-ordered array of `out_dtype` (fft_result_dtype). Any dtype and layout in.
NDArray fft_block(const NDArray& block, FftKind kind, size_t axis, int64_t n, FftNorm norm, DType out_dtype);

//! The dtype a transform of `kind` makes from `in` (numpy 2's rules, see above).
DType fft_result_dtype(FftKind kind, DType in);

}  // namespace tessera::array
