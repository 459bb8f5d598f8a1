// Helpers shared by the rechunk tests: random chunkings and n-D index loops.
#pragma once

#include <unistd.h>

#include <atomic>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "tessera/array/core/ndarray.hpp"
#include "tessera/array/rechunk/plan.hpp"

namespace tessera::array::testing {

inline int64_t product(const std::vector<int64_t>& v) {
  int64_t n = 1;
  for (int64_t x : v) n *= x;
  return n;
}

//! The number of blocks along each axis.
inline std::vector<int64_t> grid_of(const ChunkSizes& chunks) {
  std::vector<int64_t> g;
  for (const auto& axis : chunks) g.push_back(static_cast<int64_t>(axis.size()));
  return g;
}

//! A random chunking of `length`: one block, 1-element blocks, a regular size
//! with a short last block, or random sizes; with `allow_zero`, a few empty
//! blocks mixed in.
inline std::vector<int64_t> random_chunking(std::mt19937_64& rng, int64_t length, bool allow_zero) {
  if (length == 0) return {0};
  std::vector<int64_t> c;
  switch (std::uniform_int_distribution<int>(0, 3)(rng)) {
    case 0:
      c = {length};
      break;
    case 1:
      c.assign(static_cast<size_t>(length), 1);
      break;
    case 2: {
      const int64_t k = std::uniform_int_distribution<int64_t>(1, length)(rng);
      for (int64_t left = length; left > 0; left -= k) c.push_back(std::min(k, left));
      break;
    }
    default:
      for (int64_t left = length; left > 0;) {
        const int64_t s = std::uniform_int_distribution<int64_t>(1, left)(rng);
        c.push_back(s);
        left -= s;
      }
  }
  if (allow_zero && std::uniform_int_distribution<int>(0, 4)(rng) == 0) {
    const auto at = std::uniform_int_distribution<size_t>(0, c.size())(rng);
    c.insert(c.begin() + static_cast<std::ptrdiff_t>(at), 0);
  }
  return c;
}

//! Random old and new chunkings of one random shape of 1 to 4 axes; with
//! `allow_empty`, some axes have length 0 and some blocks size 0. About one
//! case in eight has equal chunkings.
inline std::pair<ChunkSizes, ChunkSizes> random_case(std::mt19937_64& rng, bool allow_empty) {
  const int ndim = std::uniform_int_distribution<int>(1, 4)(rng);
  const int64_t max_len = ndim <= 2 ? 24 : 8;
  ChunkSizes old_chunks, new_chunks;
  const bool equal = std::uniform_int_distribution<int>(0, 7)(rng) == 0;
  for (int a = 0; a < ndim; ++a) {
    int64_t len = std::uniform_int_distribution<int64_t>(1, max_len)(rng);
    if (allow_empty && std::uniform_int_distribution<int>(0, 9)(rng) == 0) len = 0;
    old_chunks.push_back(random_chunking(rng, len, allow_empty));
    new_chunks.push_back(equal ? old_chunks.back() : random_chunking(rng, len, allow_empty));
  }
  return {old_chunks, new_chunks};
}

//! 0, 1, 2, ... in C order, as `dtype`.
inline NDArray iota(const Shape& shape, DType dtype = DType::int32()) {
  std::vector<int32_t> v(static_cast<size_t>(product(shape)));
  std::iota(v.begin(), v.end(), 0);
  return NDArray::from_vector(v, shape).astype(dtype);
}

//! A fresh directory under the system's temporary one, removed at scope exit.
struct TempDir {
  std::filesystem::path path;
  TempDir() {
    static std::atomic<int> counter{0};
    path = std::filesystem::temp_directory_path() /
           ("tessera-rechunk-test-" + std::to_string(::getpid()) + "-" + std::to_string(counter++));
    std::filesystem::create_directories(path);
  }
  ~TempDir() { std::filesystem::remove_all(path); }
  size_t entries() const {
    return static_cast<size_t>(std::distance(std::filesystem::directory_iterator(path), {}));
  }
};

//! Every method and variant, labelled; disk scratch goes to `scratch`.
inline std::vector<std::pair<std::string, RechunkOptions>> every_method(const std::string& scratch) {
  return {{"tasks fused", {.method = RechunkMethod::tasks}},
          {"tasks unfused", {.method = RechunkMethod::tasks, .fuse = false}},
          {"tasks, tiny limit", {.method = RechunkMethod::tasks, .block_size_limit = 16}},
          {"tasks unfused, tiny limit", {.method = RechunkMethod::tasks, .block_size_limit = 16, .fuse = false}},
          {"shuffle on disk", {.method = RechunkMethod::shuffle, .scratch_dir = scratch}},
          {"shuffle in memory", {.method = RechunkMethod::shuffle, .disk = false}},
          {"automatic", {.method = RechunkMethod::automatic, .scratch_dir = scratch}}};
}

}  // namespace tessera::array::testing
