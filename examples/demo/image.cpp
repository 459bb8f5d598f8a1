#include "image.hpp"

#include <cmath>
#include <numbers>
#include <utility>

namespace demo {

namespace ta = tessera::array;

Image::Image(int64_t r, int64_t c, std::vector<Wave> w) : rows(r), cols(c), waves(std::move(w)) {
  for (const Wave& wave : waves) {
    std::vector<float> s(static_cast<size_t>(cols)), co(static_cast<size_t>(cols));
    for (int64_t j = 0; j < cols; ++j) {
      const double b = 2 * std::numbers::pi * static_cast<double>((wave.kx * j) % cols) / static_cast<double>(cols);
      s[j] = static_cast<float>(std::sin(b));
      co[j] = static_cast<float>(std::cos(b));
    }
    col_sin.push_back(std::move(s));
    col_cos.push_back(std::move(co));
  }
}

ta::NDArray Image::block(int64_t row0, const ta::Shape& shape) const {
  ta::NDArray out = ta::NDArray::empty(ta::DType::float32(), shape);
  float* p = out.data<float>();
  uint64_t state = 0x9e3779b97f4a7c15ULL * static_cast<uint64_t>(row0 + 1);
  for (int64_t i = 0; i < shape[0]; ++i) {
    float* row = p + i * cols;
    for (int64_t j = 0; j < cols; ++j) {
      state ^= state << 13;  // xorshift64: fast, and plenty for noise
      state ^= state >> 7;
      state ^= state << 17;
      row[j] = static_cast<float>(state >> 40) * (2.0f / 16777216.0f) - 1.0f;
    }
    for (size_t w = 0; w < waves.size(); ++w) {
      const double a =
          2 * std::numbers::pi * static_cast<double>((waves[w].ky * (row0 + i)) % rows) / static_cast<double>(rows);
      const float sa = waves[w].amplitude * static_cast<float>(std::sin(a));
      const float ca = waves[w].amplitude * static_cast<float>(std::cos(a));
      const float* cs = col_cos[w].data();
      const float* sn = col_sin[w].data();
      for (int64_t j = 0; j < cols; ++j) row[j] += sa * cs[j] + ca * sn[j];
    }
  }
  return out;
}

double Image::frequency(const Wave& w) const {
  const double fy = static_cast<double>(w.ky) / static_cast<double>(rows);
  const double fx = static_cast<double>(w.kx) / static_cast<double>(cols);
  return std::sqrt(fy * fy + fx * fx);
}

}  // namespace demo
