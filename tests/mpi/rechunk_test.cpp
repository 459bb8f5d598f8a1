// The rechunk across MPI ranks (rechunk_store with world_communicator()): every
// rank of the mpirun takes part; the stores it writes are compared byte for
// byte with the single-process rechunk_store's, and failures must reach every
// rank as the same error, with nothing published.
#include <doctest/doctest.h>

#include <absl/strings/str_cat.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "array/rechunk/store_files.hpp"
#include "array/rechunk/test_util.hpp"
#include "mpi/shared_dir.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/mpi/communicator.hpp"

using namespace tessera;
using namespace tessera::array;
using tessera::array::testing::iota;
using tessera::mpi_testing::SharedDir;

namespace {

namespace fs = std::filesystem;

// Rank 0 writes `x` as a zarr store at `path`; the others wait for it.
void make_source(Communicator& comm, const Array& x, const std::string& path) {
  if (comm.rank() == 0) store(x, path);
  barrier(comm);
}

}  // namespace

TEST_CASE("world_communicator: rank, size and allgather over MPI") {
  const auto comm = mpi::world_communicator();
  const std::vector<int64_t> ranks = comm->allgather(comm->rank());
  REQUIRE(ranks.size() == static_cast<size_t>(comm->size()));
  for (size_t r = 0; r < ranks.size(); ++r) CHECK(ranks[r] == static_cast<int64_t>(r));
  CHECK(allgather_strings(*comm, std::string(static_cast<size_t>(comm->rank()), 'a')).back() ==
        std::string(static_cast<size_t>(comm->size() - 1), 'a'));
}

TEST_CASE("rechunk_store over MPI writes the single-process store, byte for byte") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "rechunk");
  struct Case {
    Shape shape;
    Chunks old_chunks;
    ChunkSpec new_chunks;
    DType dtype;
    size_t max_mem;
    std::string codec;
  };
  const std::vector<Case> cases = {
      {{96, 64}, Chunks({std::vector<int64_t>(12, 8), {64}}), ChunkSpec({-1, 8}), DType::float64(), 24 << 10, "none"},
      {{30, 20, 10}, Chunks({{7, 7, 7, 7, 2}, {20}, {3, 3, 3, 1}}), ChunkSpec({10, 4, 10}), DType::int16(), 1 << 20,
       "none"},
      {{100}, Chunks({{13, 13, 13, 13, 13, 13, 13, 9}}), ChunkSpec(7), DType::int8(), 64, "none"},
      {{40, 24}, Chunks({{5, 5, 5, 5, 5, 5, 5, 5}, {24}}), ChunkSpec({-1, 6}), DType::float32(), 1 << 20, "zstd:3"},
  };
  int n = 0;
  for (const Case& c : cases) {
    CAPTURE(n);
    const std::string src = (dir.path / absl::StrCat("src", n, ".zarr")).string();
    const std::string ref = (dir.path / absl::StrCat("ref", n, ".zarr")).string();
    const std::string out = (dir.path / absl::StrCat("out", n, ".zarr")).string();
    make_source(*comm, from_ndarray(iota(c.shape, c.dtype), c.old_chunks), src);
    const RechunkStoreResult r = rechunk_store(
        from_zarr(src), c.new_chunks, out,
        {.store = {.compute = {.num_workers = 2, .memory_limit = c.max_mem}, .zarr = {.codec = c.codec}},
         .communicator = comm});
    CHECK(r.chunks == normalize_chunks(c.new_chunks, c.shape, c.dtype));
    if (comm->rank() == 0) {
      rechunk_store(from_zarr(src), c.new_chunks, ref, {.store = {.zarr = {.codec = c.codec}}});
      const auto expected = tessera::array::testing::store_files(ref);
      REQUIRE(expected.size() > 1);
      CHECK(tessera::array::testing::store_files(out) == expected);
    }
    barrier(*comm);
    ++n;
  }
}

TEST_CASE("rechunk_store over MPI: a refused target is the same error on every rank, naming rank 0") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "rechunk");
  const std::string src = (dir.path / "src.zarr").string();
  const std::string out = (dir.path / "taken.zarr").string();
  make_source(*comm, from_ndarray(iota({16, 8}, DType::float64()), Chunks({{4, 4, 4, 4}, {8}})), src);
  if (comm->rank() == 0) std::ofstream(out) << "not a store";
  barrier(*comm);
  const std::string expected = absl::StrCat("rank 0 of ", comm->size(), ": ") + out;
  CHECK_THROWS_WITH_AS(rechunk_store(from_zarr(src), ChunkSpec({16, 2}), out, {.communicator = comm}),
                       doctest::Contains(expected.c_str()), Error);
  barrier(*comm);
  std::ifstream in(out);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "not a store");
  CHECK(tessera::array::testing::names_in(dir.path) == std::vector<std::string>{"src.zarr", "taken.zarr"});
}

TEST_CASE("rechunk_store over MPI: an unreadable input block is the same TaskError on every rank, naming its key and owner; nothing is published") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "rechunk");
  const std::string src = (dir.path / "src.zarr").string();
  const std::string out = (dir.path / "out.zarr").string();
  make_source(*comm, from_ndarray(iota({16, 8}, DType::float64()), Chunks({{4, 4, 4, 4}, {8}})), src);
  // Block (1, 0), flat index 1, is read by rank 1: cut its chunk file short.
  if (comm->rank() == 0) fs::resize_file(zarr::open(src).chunk_path({1, 0}), 10);
  barrier(*comm);
  bool thrown = false;
  try {
    (void)rechunk_store(from_zarr(src), ChunkSpec({16, 2}), out, {.communicator = comm});
  } catch (const TaskError& e) {  // as ta::store across ranks gives it (store_test.cpp)
    thrown = true;
    // x's name is made per process; the key is the owner's block (1, 0) of it.
    CHECK(e.key().name().substr(0, 10) == "from-zarr-");
    CHECK(std::vector<int64_t>(e.key().index().begin(), e.key().index().end()) == std::vector<int64_t>{1, 0});
    CHECK_MESSAGE(std::string(e.what()).find("failed: on rank 1: ") != std::string::npos, e.what());
  }
  CHECK(thrown);
  barrier(*comm);
  CHECK(tessera::array::testing::names_in(dir.path) == std::vector<std::string>{"src.zarr"});
}
