// reshape against numpy (the values) and dask (the output chunks, and which new
// shapes cannot be done block by block), on random shapes, chunks and dtypes.
#include <doctest/doctest.h>

#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/ops/numpy_check.hpp"
#include "python_peer.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera::array;
using namespace tessera::array::testing;

namespace {

// A list of small factors grouped into runs two ways: `from` and `to` multiply
// the runs of each grouping. Neighbouring runs that differ make merges and
// splits; runs that overlap unevenly (6, 4) -> (2, 12) make a shape dask cannot
// reshape block by block unless it is one block.
struct ShapePair {
  Shape from, to;
};

Shape group(const std::vector<int64_t>& factors, std::mt19937_64& rng) {
  Shape out;
  for (int64_t f : factors) {
    if (out.empty() || rng() % 2 == 0) {
      out.push_back(f);
    } else {
      out.back() *= f;
    }
  }
  return out;
}

ShapePair random_shapes(std::mt19937_64& rng) {
  std::vector<int64_t> factors(2 + rng() % 4);
  for (int64_t& f : factors) f = 1 + static_cast<int64_t>(rng() % 3);
  return {group(factors, rng), group(factors, rng)};
}

// Python's repr of a tuple of ints: "(3,)", "(2, 4)".
std::string py_tuple(const Shape& s) {
  return s.size() == 1 ? absl::StrCat("(", s[0], ",)") : absl::StrCat("(", absl::StrJoin(s, ", "), ")");
}

}  // namespace

TEST_CASE("reshape equals numpy's values and dask's chunks" * python_peer::needed()) {
  std::mt19937_64 rng(41);
  TempDir dir;
  struct Case {
    DType dtype;
    Chunks chunks;
    Shape to;  // as asked, maybe with a -1
  };
  std::vector<Case> cases;
  std::string script = "import dask.array as da\n";
  for (int i = 0; i < 80; ++i) {
    const auto [from, to] = random_shapes(rng);
    std::vector<std::vector<int64_t>> sizes;
    for (int64_t n : from) sizes.push_back(random_sizes(n, rng));
    Case c{kDTypes[rng() % std::size(kDTypes)], Chunks(sizes), to};
    if (rng() % 3 == 0) c.to[rng() % to.size()] = -1;
    npy::save(dir / absl::StrCat("a", i, ".npy"), random_block(c.dtype, from, rng));
    absl::StrAppend(&script, "a = np.load('a", i, ".npy')\n", "np.save('r", i, ".npy', a.reshape(", py_tuple(c.to),
                    "))\n", "try:\n", "    print(da.from_array(a, chunks=", c.chunks.str(), ").reshape(",
                    py_tuple(c.to), ").chunks)\n", "except NotImplementedError:\n", "    print('not block-wise')\n");
    cases.push_back(std::move(c));
  }
  std::istringstream dask_says(run_python(dir, absl::StrCat("import os\nos.chdir('", dir.path().string(), "')\n", script)));
  int block_wise = 0, refused = 0;
  for (size_t i = 0; i < cases.size(); ++i) {
    const Case& c = cases[i];
    const Array x = from_npy(dir / absl::StrCat("a", i, ".npy"), c.chunks);
    std::string want;
    std::getline(dask_says, want);
    INFO("case ", i, ": ", c.dtype.name(), " ", shape_str(x.shape()), " chunks ", c.chunks.str(), " to ",
         shape_str(c.to), "; dask: ", want);
    if (want == "not block-wise") {
      ++refused;
      CHECK_THROWS_AS(reshape(x, c.to), tessera::Error);
      continue;
    }
    ++block_wise;
    const Array y = reshape(x, c.to);
    CHECK(y.chunks().str() == want);
    check_close(y.compute({.num_workers = 1 + static_cast<int>(i % 2)}), npy::open(dir / absl::StrCat("r", i, ".npy")),
                y.name());
  }
  // The random shapes must exercise both sides.
  CHECK(block_wise > 40);
  CHECK(refused > 5);
}

TEST_CASE("reshape merges and splits as dask plans it") {
  // Merge: the run's inner axis made whole, its first axis cut finer so blocks stay small.
  const Array x = zeros({6, 5, 4}, {3, 2, 2});
  CHECK(reshape(x, {6, -1}).chunks() == Chunks({{3, 3}, {4, 4, 4, 4, 4}}));
  // Split: the blocks regrouped into multiples of the new inner extent.
  const Array v = zeros({24}, {{2, 2, 8, 4, 8}});
  CHECK(reshape(v, {6, 4}).chunks() == Chunks({{1, 2, 1, 2}, {4}}));
  // Single elements before the run's last axis: blocks only move, nothing is rechunked.
  const Array s = zeros({3, 4}, {1, 2});
  const Array m = reshape(s, {12});
  CHECK(m.chunks() == Chunks({{2, 2, 2, 2, 2, 2}}));
  CHECK(m.layers().size() == s.layers().size() + 1);
  // Axes of length 1 come and go on either side.
  CHECK(reshape(zeros({1, 6, 1}, {1, 3, 1}), {2, 1, 3}).chunks() == Chunks({{1, 1}, {1}, {3}}));
  // One block takes any shape, with no rechunk.
  CHECK(reshape(zeros({4, 6}, -1), {3, 8}).chunks() == Chunks({{3}, {8}}));
  // The same shape: the same array.
  CHECK(reshape(x, {6, 5, -1}).name() == x.name());
}

TEST_CASE("reshape of an empty array is one empty block of the new shape") {
  const Array x = zeros({0, 6}, {{0}, {2, 4}});
  const Array y = reshape(x, {3, 0, 2});
  CHECK(y.chunks() == Chunks({{3}, {0}, {2}}));
  const NDArray got = y.compute();
  CHECK(shape_str(got.shape()) == "(3, 0, 2)");
}

TEST_CASE("reshape of blocks that are strided views keeps C order") {
  // x.T cut into single rows: the merge only moves blocks, and each block is a
  // transposed (not contiguous) view that must be copied before its reshape.
  std::vector<int64_t> values(24);
  for (int64_t i = 0; i < 24; ++i) values[static_cast<size_t>(i)] = i;
  const Array x = from_ndarray(NDArray::from_vector(values, {4, 6}), {2, 1});
  const Array y = reshape(transpose(x), {24});
  CHECK(y.chunks() == Chunks({std::vector<int64_t>(12, 2)}));
  const NDArray got = y.compute();
  for (int64_t i = 0; i < 24; ++i) CHECK(got.at<int64_t>({i}) == (i % 4) * 6 + i / 4);
}

TEST_CASE("reshape errors say what the shapes were") {
  const Array x = zeros({5, 6}, {2, 3});
  REQUIRE_THROWS_WITH_AS(reshape(x, {-1, 2, -1}), "reshape: only one extent can be -1 (inferred), found 2 in (-1, 2, -1)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(reshape(x, {3, -2}),
                         "reshape: extent -2 in (3, -2) is negative (only -1 may stand for an extent to infer)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(reshape(x, {4, 8}),
                         "reshape: cannot reshape an array of shape (5, 6) (30 elements) into shape (4, 8) (32 elements)",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(reshape(x, {4, -1}),
                         "reshape: cannot reshape an array of shape (5, 6) (30 elements) into shape (4, -1): 30 is not a "
                         "multiple of 4",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(reshape(zeros({0, 6}, 3), {0, -1}),
                         "reshape: cannot reshape an array of shape (0, 6) (0 elements) into shape (0, -1): -1 is "
                         "undetermined when the other extents multiply to 0",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(reshape(x, {int64_t{1} << 40, int64_t{1} << 40}),
                         "reshape: cannot reshape an array of shape (5, 6) (30 elements) into shape (1099511627776, "
                         "1099511627776): its extents multiply past 2^63",
                         tessera::Error);
  REQUIRE_THROWS_WITH_AS(reshape(x, {6, 5}),
                         "reshape: cannot reshape an array of shape (5, 6) into (6, 5) block by block: only merging "
                         "adjacent axes into one or splitting one axis into adjacent ones is supported (as in dask); "
                         "reshape in several steps, or rechunk to one block first",
                         tessera::Error);
}
