// store across MPI ranks (StoreOptions::compute.communicator): every rank
// writes the chunks of the blocks it owns into one temporary store, which is
// published once, after every rank has written. The stores are compared byte
// for byte with one process's; a task that throws on the last rank reaches
// every rank as the same TaskError, with nothing published and no temporary
// left.
#include <doctest/doctest.h>

#include <absl/strings/str_cat.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "array/rechunk/store_files.hpp"
#include "mpi/shared_dir.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/mpi/communicator.hpp"

using namespace tessera;
namespace ta = tessera::array;
using tessera::array::testing::names_in;
using tessera::array::testing::store_files;
using tessera::mpi_testing::same_tokens;
using tessera::mpi_testing::SharedDir;

namespace store_across_test {

// 8 x 3 blocks, so that every rank (up to 4) owns some; an element-wise step
// on top, so that each block's store task reads a task's result.
ta::Array input() { return ta::random({64, 36}, {8, 12}, 11) * 3.0 + 1.0; }

}  // namespace store_across_test

TEST_CASE("MPI store: the store across ranks equals one process's, byte for byte (v2, v3, a codec)") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "store");
  const ta::Array x = store_across_test::input();
  const std::vector<std::pair<std::string, ta::zarr::Format>> formats = {
      {"v2-raw", {.codec = "none"}},
      {"v2-zstd", {.codec = "zstd:3"}},
      {"v3-blosc", {.zarr_format = 3, .codec = "blosc:lz4:5:shuffle"}},
      {"v3-sharded", {.zarr_format = 3, .codec = "zstd:1", .inner_chunks = {4, 6}}}};
  for (const auto& entry : formats) {
    const auto& [label, format] = entry;
    CAPTURE(entry.first);
    const std::string out = (dir.path / (label + "-across.zarr")).string();
    const std::string ref = (dir.path / (label + "-one.zarr")).string();
    same_tokens(*comm);  // rank 0's reference of the last format moved its tokens on
    ta::store(x, out, {.compute = {.num_workers = 2, .communicator = comm}, .zarr = format});
    if (comm->rank() == 0) {
      ta::store(x, ref, {.compute = {.num_workers = 2}, .zarr = format});
      const auto expected = store_files(ref);
      CHECK(expected.size() > 2);
      CHECK(store_files(out) == expected);
    }
    barrier(*comm);
  }
  // Nothing but the published stores: no temporary of any rank is left.
  if (comm->rank() == 0) CHECK(names_in(dir.path).size() == 2 * formats.size());
}

TEST_CASE("MPI store: a task that throws on the last rank is the same TaskError on every rank; nothing is published") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "store-error");
  same_tokens(*comm);
  const int last = comm->size() - 1;
  // The last row block is the last rank's (placement.hpp: contiguous runs of blocks).
  auto make = [](std::span<const int64_t> offset, const ta::Shape& shape) {
    if (offset[0] == 56) throw std::runtime_error("kaboom");
    return ta::NDArray::full(ta::DType::float64(), shape, ta::Scalar(static_cast<double>(offset[0])));
  };
  const ta::Array blocks = ta::from_blocks(make, ta::DType::float64(), {64, 36}, {8, 12});
  const ta::Array x = blocks + 1.0;
  const std::string out = (dir.path / "out.zarr").string();
  bool thrown = false;
  try {
    ta::store(x, out, {.compute = {.num_workers = 2, .communicator = comm}, .zarr = {.codec = "zstd:1"}});
  } catch (const TaskError& e) {
    thrown = true;
    CHECK(e.key().name() == blocks.name());
    CHECK(e.key().index()[0] == 7);
    CHECK(std::string(e.what()).find(absl::StrCat("failed: on rank ", last, ": kaboom")) != std::string::npos);
  }
  CHECK(thrown);
  barrier(*comm);
  CHECK(names_in(dir.path).empty());  // no store, no temporary
}

TEST_CASE("MPI store: a target that exists stops every rank before any block is written") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "store-exists");
  same_tokens(*comm);
  const std::string out = (dir.path / "out.zarr").string();
  if (comm->rank() == 0) ta::store(store_across_test::input(), out);
  barrier(*comm);
  const ta::StoreOptions options{.compute = {.communicator = comm}};
  if (comm->rank() == 0) {
    CHECK_THROWS_WITH_AS(ta::store(store_across_test::input(), out, options),
                         (out + ": the target exists; pass overwrite to replace it").c_str(), StorageError);
  } else {
    CHECK_THROWS_WITH_AS(ta::store(store_across_test::input(), out, options),
                         absl::StrCat("rank 0 of ", comm->size(), ": ", out,
                                      ": the target exists; pass overwrite to replace it").c_str(),
                         Error);
  }
}

TEST_CASE("MPI store: a .npy target across ranks is refused on every rank") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "store-npy");
  same_tokens(*comm);
  const std::string out = (dir.path / "out.npy").string();
  CHECK_THROWS_WITH_AS(ta::store(store_across_test::input(), out, {.compute = {.communicator = comm}}),
                       (out + ": store across ranks writes zarr stores only, not .npy files").c_str(), StorageError);
  barrier(*comm);
  CHECK(names_in(dir.path).empty());
}

TEST_CASE("MPI store: rechunk_store with the communicator in its compute options runs across ranks") {
  const auto comm = mpi::world_communicator();
  SharedDir dir(comm, "store-rechunk");
  same_tokens(*comm);
  const ta::Array x = store_across_test::input();
  const std::string out = (dir.path / "cols-across.zarr").string(), ref = (dir.path / "cols-one.zarr").string();
  ta::RechunkStoreOptions across;
  across.store.compute = {.num_workers = 2, .communicator = comm};
  (void)ta::rechunk_store(x, {-1, 6}, out, across);
  if (comm->rank() == 0) {
    (void)ta::rechunk_store(x, {-1, 6}, ref);
    CHECK(store_files(out) == store_files(ref));
  }
}
