// The demo's input: an image of noise plus plane waves of known frequencies,
// generated block by block (any block from its first row alone, so the blocks
// of a store are made in parallel and on any rank).
#pragma once

#include <cstdint>
#include <vector>

#include "tessera/array/core/ndarray.hpp"

namespace demo {

// A plane wave sin(2 pi (ky i / rows + kx j / cols)) of amplitude `amplitude`.
struct Wave {
  int64_t ky, kx;
  float amplitude;
};

// The image: `rows` x `cols` float32, noise uniform in [-1, 1) plus the waves.
// sin(a + b) = sin a cos b + cos a sin b, so each wave costs two multiply-adds
// per element with per-column tables shared by every block.
struct Image {
  int64_t rows, cols;
  std::vector<Wave> waves;
  std::vector<std::vector<float>> col_sin, col_cos;  // per wave, per column

  Image(int64_t r, int64_t c, std::vector<Wave> w);

  // Rows [row0, row0 + shape[0]) of the image.
  tessera::array::NDArray block(int64_t row0, const tessera::array::Shape& shape) const;

  // The radial frequency (cycles per sample) of a wave.
  double frequency(const Wave& w) const;
};

}  // namespace demo
