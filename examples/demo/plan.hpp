// How the demo cuts its work: the image's shape for --size, the blocks of each
// step from --max-mem and the workers, and `--dry-run`, which prints that plan
// across any number of ranks without computing.
#pragma once

#include <cstdint>
#include <utility>

#include "settings.hpp"

namespace demo {

// The image's shape and the blocks of each step, from --size (or --input) and --max-mem.
struct Geometry {
  int64_t rows = 0, cols = 0;
  int64_t block_bytes = 0;    // a block of either step, at most
  int64_t row_block = 0;      // rows per block of the image and of the row spectrum
  int64_t spectrum_cols = 0;  // cols / 2 + 1
  int64_t col_block = 0;      // columns per block of the column spectrum
};

//! The blocks of each step for an image of `rows` x `cols` under the settings' --max-mem.
Geometry geometry(const Settings& s, int64_t rows, int64_t cols);

// The image's shape for --size: columns a power of two near sqrt(size / 4), rows to make up the size.
std::pair<int64_t, int64_t> image_shape(int64_t size);

// --dry-run: the plan across `s.ranks` ranks, from the same sizing and the
// rechunk's own exchange plan (print_exchange_plan), without computing.
int dry_run(const Settings& s);

}  // namespace demo
