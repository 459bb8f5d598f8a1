#include "spectrum.hpp"

#include <algorithm>
#include <cmath>
#include <complex>

namespace demo {

namespace ta = tessera::array;

Binning binning_of(int64_t rows, int64_t cols) {
  const double scale = static_cast<double>(std::max(rows, cols));
  return {rows, cols, scale, static_cast<size_t>(scale * std::sqrt(0.5)) + 3};
}

Radial radial_partial(const ta::NDArray& block, int64_t col0, const Binning& b) {
  Radial r{std::vector<double>(b.bins, 0.0), std::vector<double>(b.bins, 0.0)};
  const int64_t width = block.shape()[1];
  const auto* x = block.data<const std::complex<float>>();
  std::vector<double> fx2(static_cast<size_t>(width)), weight(static_cast<size_t>(width));
  for (int64_t j = 0; j < width; ++j) {
    const double fx = static_cast<double>(col0 + j) / static_cast<double>(b.cols);
    fx2[j] = fx * fx;
    weight[j] = (col0 + j == 0 || 2 * (col0 + j) == b.cols) ? 1.0 : 2.0;
  }
  for (int64_t i = 0; i < b.rows; ++i) {
    const int64_t ky = 2 * i <= b.rows ? i : i - b.rows;
    const double fy = static_cast<double>(ky) / static_cast<double>(b.rows);
    const std::complex<float>* row = x + i * width;
    for (int64_t j = 0; j < width; ++j) {
      // Rounds a non-negative value; std::lround is a libm call per element.
      const auto bin = static_cast<size_t>(std::sqrt(fy * fy + fx2[j]) * b.scale + 0.5);
      r.power[bin] += weight[j] * std::norm(row[j]);
      r.count[bin] += weight[j];
    }
  }
  return r;
}

Radial add(const std::vector<Radial>& parts) {
  Radial total = parts.front();
  for (size_t p = 1; p < parts.size(); ++p) {
    for (size_t k = 0; k < total.power.size(); ++k) {
      total.power[k] += parts[p].power[k];
      total.count[k] += parts[p].count[k];
    }
  }
  return total;
}

size_t nbytes(const Radial& r) { return (r.power.size() + r.count.size()) * sizeof(double); }

std::vector<size_t> peaks(const Radial& r) {
  std::vector<double> avg(r.power.size(), 0.0);
  for (size_t k = 0; k < avg.size(); ++k) avg[k] = r.count[k] > 0 ? r.power[k] / r.count[k] : 0.0;
  std::vector<double> sorted;
  for (size_t k = 2; k < avg.size(); ++k) {
    if (r.count[k] > 0) sorted.push_back(avg[k]);
  }
  std::nth_element(sorted.begin(), sorted.begin() + static_cast<long>(sorted.size() / 2), sorted.end());
  const double median = sorted[sorted.size() / 2];
  std::vector<size_t> found;
  for (size_t k = 2; k + 1 < avg.size(); ++k) {  // bins 0 and 1: the mean, not a wave
    if (avg[k] > 50 * median && avg[k] >= avg[k - 1] && avg[k] >= avg[k + 1]) found.push_back(k);
  }
  return found;
}

}  // namespace demo
