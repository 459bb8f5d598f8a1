// rechunk_store across ranks (RechunkStoreOptions::communicator), with ranks
// that are threads of this process (thread_communicators): the exchange and its
// agreement on errors, checked without MPI. tests/mpi runs the same under mpirun.
#include <doctest/doctest.h>

#include <absl/strings/str_cat.h>

#include <cstdint>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include "array/rechunk/store_files.hpp"
#include "array/rechunk/test_util.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/exchange.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/comm/communicator.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
using namespace tessera::array;
using testing::iota;
using testing::TempDir;

namespace {

// Runs `f(rank, comm)` on `n` threads, one rank each; returns each rank's
// error message ("" when it returned).
template <class F>
std::vector<std::string> on_ranks(int n, F f) {
  const auto comms = thread_communicators(n);
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r = 0; r < n; ++r) {
    threads.emplace_back([&, r] {
      try {
        f(r, comms[static_cast<size_t>(r)]);
      } catch (const std::exception& e) {
        errors[static_cast<size_t>(r)] = e.what();
        if (errors[static_cast<size_t>(r)].empty()) errors[static_cast<size_t>(r)] = "(empty message)";
      }
    });
  }
  for (auto& t : threads) t.join();
  return errors;
}

struct Case {
  Shape shape;
  ChunkSpec old_chunks;
  ChunkSpec new_chunks;
  DType dtype;
  int64_t max_mem;
};

}  // namespace

TEST_CASE("communicator: allgather, alltoallv and agree_on_errors across thread ranks") {
  const auto errors = on_ranks(3, [](int r, const std::shared_ptr<Communicator>& c) {
    CHECK(c->rank() == r);
    CHECK(c->size() == 3);
    CHECK(c->allgather(10 * r) == std::vector<int64_t>{0, 10, 20});
    CHECK(allgather_strings(*c, std::string(static_cast<size_t>(r), 'x')) == std::vector<std::string>{"", "x", "xx"});
    barrier(*c);
    agree_on_errors(*c, [] {});  // nobody fails: returns everywhere
    agree_on_errors(*c, [r] {
      if (r == 2) throw StorageError("/data/x", "cannot open", 2);
    });
  });
  for (const std::string& e : errors) {
    CHECK(e.find("rank 2 of 3: ") != std::string::npos);
    CHECK(e.find("/data/x") != std::string::npos);
  }
  CHECK_THROWS_WITH_AS(thread_communicators(0), "thread_communicators: expected at least 1 rank, found 0",
                       ValueError);
}

TEST_CASE("plan_exchange: rounds cover every output block once, under max_mem, and grow as memory shrinks") {
  // rows -> columns: 16 blocks of 4 rows into 16 blocks of 4 columns, float64.
  const ChunkSizes rows{std::vector<int64_t>(16, 4), {64}};
  const ChunkSizes cols{{64}, std::vector<int64_t>(16, 4)};
  const ExchangePlan big = plan_exchange(rows, cols, 8, {.ranks = 4, .max_mem = 1 << 20, .workers = 1});
  CHECK(big.rounds.size() == 1);
  CHECK(big.rounds[0].senders == 4);
  CHECK(big.rounds[0].receivers == 4);
  CHECK(big.rounds[0].max_messages() == 12);
  CHECK(big.rounds[0].bytes == 64 * 64 * 8);
  CHECK(big.rounds[0].max_send == 64 * 64 * 8 / 4);
  const ExchangePlan small = plan_exchange(rows, cols, 8, {.ranks = 4, .max_mem = 9000, .workers = 1});
  CHECK(small.rounds.size() > 1);
  CHECK(small.peak_memory <= 9000);
  int64_t blocks = 0, bytes = 0;
  for (const ExchangeRound& r : small.rounds) {
    blocks += r.output_blocks;
    bytes += r.bytes;
    CHECK(r.max_peak <= 9000);
  }
  CHECK(blocks == 16);
  CHECK(bytes == small.total_bytes);
  CHECK_THROWS_WITH_AS(plan_exchange(rows, cols, 8, {.ranks = 4, .max_mem = 1000, .workers = 1}),
                       doctest::Contains("max_mem of 1000 bytes per rank cannot hold a round of one output block"),
                       ChunkError);
  CHECK_THROWS_WITH_AS(plan_exchange(rows, cols, 8, {.ranks = 0, .max_mem = 1000, .workers = 1}),
                       doctest::Contains("expected ranks, workers, max_mem and itemsize of at least 1"), ChunkError);
}

TEST_CASE("rechunk_store across 1, 2 and 4 thread ranks writes the single-process store, byte for byte") {
  const std::vector<Case> cases = {
      {{64, 48}, ChunkSpec({8, -1}), ChunkSpec({-1, 8}), DType::float64(), 16 << 10},  // rows -> columns, rounds
      {{30, 20, 10}, ChunkSpec({7, 20, 3}), ChunkSpec({10, 4, 10}), DType::int16(), 1 << 20},
      {{100}, ChunkSpec(13), ChunkSpec(7), DType::int8(), 64},  // many rounds of a few blocks
      {{33, 17}, ChunkSpec({5, 4}), ChunkSpec({6, 17}), DType::float32(), 1 << 20},
  };
  TempDir dir;
  int n = 0;
  for (const Case& c : cases) {
    const Array x = from_ndarray(iota(c.shape, c.dtype), normalize_chunks(c.old_chunks, c.shape, c.dtype));
    const std::string ref = absl::StrCat(dir.path.string(), "/ref", n, ".zarr");
    rechunk_store(x, c.new_chunks, ref);
    const auto expected = testing::store_files(ref);
    REQUIRE(expected.size() > 1);  // metadata and chunks
    for (int ranks : {1, 2, 4}) {
      CAPTURE(n);
      CAPTURE(ranks);
      const std::string out = absl::StrCat(dir.path.string(), "/out", n, "-", ranks, ".zarr");
      const auto errors = on_ranks(ranks, [&](int, const std::shared_ptr<Communicator>& comm) {
        const RechunkStoreResult r = rechunk_store(
            x, c.new_chunks, out,
            {.store = {.compute = {.num_workers = 2, .memory_limit = static_cast<size_t>(c.max_mem)}},
             .communicator = comm});
        CHECK(r.chunks == normalize_chunks(c.new_chunks, c.shape, c.dtype));
      });
      CHECK(errors == std::vector<std::string>(static_cast<size_t>(ranks)));
      CHECK(testing::store_files(out) == expected);
    }
    ++n;
  }
}

TEST_CASE("rechunk_store across ranks: a refused target fails on every rank, naming rank 0, and is left alone") {
  TempDir dir;
  const Array x = from_ndarray(iota({8, 8}, DType::float64()), Chunks({{4, 4}, {8}}));
  const std::string out = (dir.path / "taken.zarr").string();
  { std::ofstream(out) << "not a store"; }
  const auto errors = on_ranks(2, [&](int, const std::shared_ptr<Communicator>& comm) {
    rechunk_store(x, ChunkSpec({8, 4}), out, {.communicator = comm});
  });
  for (const std::string& e : errors) {
    CHECK(e.find("rank 0 of 2: ") != std::string::npos);
    CHECK(e.find("taken.zarr") != std::string::npos);
  }
  CHECK(errors[0] == errors[1]);
  std::ifstream in(out);
  CHECK(std::string(std::istreambuf_iterator<char>(in), {}) == "not a store");
  CHECK(testing::names_in(dir.path) == std::vector<std::string>{"taken.zarr"});
}

TEST_CASE("rechunk_store across ranks: an unreadable input block is the same TaskError on every rank, naming its owner; nothing is published") {
  TempDir dir;
  const std::string src = (dir.path / "src.zarr").string();
  store(from_ndarray(iota({16, 8}, DType::float64()), Chunks({{4, 4, 4, 4}, {8}})), src);
  // Block (1, 0), flat index 1, is read by rank 1 of 2: cut its chunk file short.
  std::filesystem::resize_file(zarr::open(src).chunk_path({1, 0}), 10);
  const std::string out = (dir.path / "out.zarr").string();
  const auto errors = on_ranks(2, [&](int, const std::shared_ptr<Communicator>& comm) {
    rechunk_store(from_zarr(src), ChunkSpec({16, 2}), out, {.communicator = comm});
  });
  for (const std::string& e : errors) {
    CHECK(e.find("(from_zarr) failed: on rank 1: ") != std::string::npos);  // a TaskError's message
    CHECK(e.find("rank 0") == std::string::npos);
    CHECK(e.find("1.0") != std::string::npos);  // the chunk's file
  }
  CHECK(errors[0] == errors[1]);
  CHECK(testing::names_in(dir.path) == std::vector<std::string>{"src.zarr"});
}

TEST_CASE("rechunk_store across ranks: a .npy target is refused on every rank") {
  TempDir dir;
  const Array x = from_ndarray(iota({8, 8}, DType::float64()), Chunks({{4, 4}, {8}}));
  const std::string out = (dir.path / "out.npy").string();
  const auto errors = on_ranks(2, [&](int, const std::shared_ptr<Communicator>& comm) {
    rechunk_store(x, ChunkSpec({8, 4}), out, {.communicator = comm});
  });
  for (const std::string& e : errors) {
    CHECK(e.find("rank 0 of 2: ") != std::string::npos);
    CHECK(e.find("rank 1 of 2: ") != std::string::npos);
    CHECK(e.find("writes zarr stores only, not .npy files") != std::string::npos);
  }
  CHECK(testing::names_in(dir.path).empty());
}

TEST_CASE("rechunk_store across ranks: an empty array and a 0-d one give the single-process store") {
  TempDir dir;
  int n = 0;
  for (const Array& x : {from_ndarray(iota({0, 6}, DType::float64()), Chunks({{0}, {3, 3}})),
                         from_ndarray(iota({}, DType::int32()), Chunks())}) {
    CAPTURE(n);
    const ChunkSpec target = x.ndim() == 0 ? ChunkSpec(std::vector<AxisChunks>{}) : ChunkSpec({-1, 2});
    const std::string ref = absl::StrCat(dir.path.string(), "/ref", n, ".zarr");
    const std::string out = absl::StrCat(dir.path.string(), "/out", n, ".zarr");
    rechunk_store(x, target, ref);
    const auto errors = on_ranks(2, [&](int, const std::shared_ptr<Communicator>& comm) {
      rechunk_store(x, target, out, {.communicator = comm});
    });
    CHECK(errors == std::vector<std::string>(2));
    CHECK(testing::store_files(out) == testing::store_files(ref));
    ++n;
  }
}
