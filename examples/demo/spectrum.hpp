// The demo's answer: the power spectrum of the image summed into radial bins
// (a partial sum per column block of the 2-D spectrum, added up by a tree of
// tasks), and the peaks of its radial average, which should be the planted waves.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "tessera/array/core/ndarray.hpp"
#include "tessera/graph/spill.hpp"

namespace demo {

// Radial bins of the power spectrum: bin b holds frequencies within half a bin
// of b / scale cycles per sample.
struct Radial {
  std::vector<double> power, count;
};

struct Binning {
  int64_t rows, cols;  // of the image (the spectrum has cols / 2 + 1 columns)
  double scale;        // bins per cycle per sample
  size_t bins;
};

//! Radial bins for an image of `rows` x `cols`.
Binning binning_of(int64_t rows, int64_t cols);

// The power of one column block of the 2-D spectrum (rows x its columns, from
// `col0`) added into radial bins. Columns strictly between 0 and cols / 2 stand for
// their mirror images too (a real image's spectrum is Hermitian), so they count twice.
Radial radial_partial(const tessera::array::NDArray& block, int64_t col0, const Binning& b);

//! The sum of partial sums (one level of the tree).
Radial add(const std::vector<Radial>& parts);

//! The bytes a Radial holds, for the scheduler's memory accounting.
size_t nbytes(const Radial& r);

// Bins whose average power stands above 50 times the median and above both neighbours.
std::vector<size_t> peaks(const Radial& r);

}  // namespace demo

// Partial sums travel between ranks (and spill) in their Spillable form (tessera/graph/spill.hpp).
template <>
struct tessera::Spillable<demo::Radial> {
  static void serialize(const demo::Radial& r, SpillWriter& w) {
    Spillable<std::vector<double>>::serialize(r.power, w);
    Spillable<std::vector<double>>::serialize(r.count, w);
  }
  static demo::Radial deserialize(SpillReader& r) {
    demo::Radial out;
    out.power = Spillable<std::vector<double>>::deserialize(r);
    out.count = Spillable<std::vector<double>>::deserialize(r);
    return out;
  }
};
