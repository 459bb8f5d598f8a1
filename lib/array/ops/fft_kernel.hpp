// Which kernel fft_block's lines go through, for the bench that weighs them.
//
// fft.cpp picks one per transform (FftKernel::automatic); bench/fft times the
// lane kernel and Eigen's FFT on the same data, so that the hand-written one
// stays only where it is the faster by the margin the project asks of
// hand-written kernels, and the bench shows it.
#pragma once

#include <cstddef>
#include <cstdint>

#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/ops/fft.hpp"

namespace tessera::array::detail {

enum class FftKernel {
  automatic,  //!< fft_block's choice
  lanes,      //!< fft_lanes.hpp's, where it handles the length (Eigen's otherwise)
  eigen,      //!< Eigen's FFT module (kissfft), line by line
};

//! The kernel fft_block uses (FftKernel::lanes or FftKernel::eigen) for a
//! transform of `kind` with `n` points along `axis` of a block of `dtype`, `shape`.
FftKernel fft_kernel_for(FftKind kind, DType dtype, int64_t n, const Shape& shape, size_t axis);

//! fft_block through `kernel`.
NDArray fft_block_with(const NDArray& block, FftKind kind, size_t axis, int64_t n, FftNorm norm, DType out_dtype,
                       FftKernel kernel);

}  // namespace tessera::array::detail
