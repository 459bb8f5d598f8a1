// Any graph across the ranks of mpirun (tessera::mpi::get): dask's graphs with
// checking task bodies, random DAGs, array workloads with all-to-all steps
// (transpose, matmul, rfft2, map_overlap, sums along each axis, rechunk) and a
// `delayed` pipeline give one process's results on rank 0, bit for bit, also
// under a memory limit that makes every rank spill and defer receives; a task
// that throws on the last rank, or a limit too small for a task, reaches every
// rank. tests/across/get_test.cpp runs the same
// over ranks that are threads.
#include <doctest/doctest.h>

#include <cmath>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "across/across_graphs.hpp"
#include "scheduler/testing.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/array/ops/overlap.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/delayed/delayed.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/mpi/communicator.hpp"
#include "tessera/mpi/environment.hpp"
#include "tessera/mpi/get.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;
namespace ta = tessera::array;

namespace {

// Two blocks the same: dtype, shape and every element's bytes.
bool same_block(const ta::NDArray& a, const ta::NDArray& b) {
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) return false;
  const ta::NDArray ca = a.copy(), cb = b.copy();
  return std::memcmp(ca.data(), cb.data(), ca.nbytes()) == 0;
}

// Each block of `r` equals the same block of `expected`, bit for bit.
void check_blocks(const Result& r, const Result& expected) {
  REQUIRE(r.size() == expected.size());
  for (size_t k = 0; k < r.size(); ++k) CHECK(same_block(r[k].as<ta::NDArray>(), expected[k].as<ta::NDArray>()));
}

// The pipeline's functions are capture-free lambdas, which delayed names by
// their type, and plain functions (below), which it names by their offset in
// the program: both the same in every process of the program, where a plain
// function's address is not (ASLR).
const auto pipeline_load = [](int64_t i) {
  std::vector<double> v(1000);
  for (size_t k = 0; k < v.size(); ++k) v[k] = std::sqrt(static_cast<double>(k + 1) * static_cast<double>(i + 3));
  return v;
};
const auto pipeline_mix = [](const std::vector<double>& a, const std::vector<double>& b) {
  std::vector<double> out(a.size());
  for (size_t k = 0; k < a.size(); ++k) out[k] = a[k] * 0.75 - b[k] / 7.0;
  return out;
};
const auto pipeline_total = [](const std::vector<std::vector<double>>& parts) {
  double s = 0;
  for (const auto& p : parts) {
    for (double v : p) s += v;
  }
  return s;
};

std::vector<double> plain_scaled(const std::vector<double>& v, double by) {
  std::vector<double> out(v.size());
  for (size_t k = 0; k < v.size(); ++k) out[k] = v[k] * by;
  return out;
}
double plain_sum(const std::vector<double>& v) {
  double s = 0;
  for (double x : v) s += x;
  return s;
}

}  // namespace

TEST_CASE("MPI get: dask's graphs give one process's results on rank 0, bit for bit") {
  // The figures of the runs, summed over the ranks (rank 0 prints them).
  const auto comm = mpi::world_communicator();
  if (mpi::world_rank() == 0) std::printf("%-26s %8s %10s %12s\n", "ranks x graph", "tasks", "messages", "bytes");
  testing::for_each_checked_graph([&](const std::string& name, const Graph& g, const Keys& keys, const std::vector<uint64_t>& expected) {
    RunStats stats;
    const Result r = mpi::get(g, keys, {.num_workers = 2, .stats = &stats});
    if (mpi::world_rank() == 0) CHECK(testing::checked_values(r) == expected);
    const auto tasks = static_cast<long long>(Plan(g, keys).num_tasks());
    int64_t messages = 0, bytes = 0;
    for (int64_t m : comm->allgather(static_cast<int64_t>(stats.messages_sent))) messages += m;
    for (int64_t b : comm->allgather(static_cast<int64_t>(stats.bytes_sent))) bytes += b;
    if (mpi::world_rank() == 0) {
      std::printf("%d x %-22s %8lld %10lld %12lld\n", mpi::world_size(), name.c_str(),
                  tasks, static_cast<long long>(messages), static_cast<long long>(bytes));
    }
  });
}

TEST_CASE("MPI get: transpose, sums along each axis and x + x.T equal one process's, bit for bit") {
  const ta::Array x = ta::random({12, 12}, std::vector<std::vector<int64_t>>{{4, 4, 4}, {6, 6}}, 7);
  // x + x.T unifies the two chunkings first (a rechunk), so blocks cross ranks.
  const std::vector<ta::Array> workloads = {ta::transpose(x), ta::sum(x, {.axis = {0}}), ta::sum(x, {.axis = {1}}),
                                            x + ta::transpose(x)};
  for (const ta::Array& a : workloads) {
    CAPTURE(a.name());
    const Graph g = a.graph();
    const Keys keys(a.keys());
    RunStats stats;
    const Result r = mpi::get(g, keys, {.num_workers = 2, .stats = &stats});
    if (mpi::world_rank() != 0) continue;
    check_blocks(r, get_sync(g, keys));
  }
}

TEST_CASE("MPI get: random DAGs give the serial evaluation, on every rank when asked") {
  uint32_t seed = 700;
  for (uint32_t size : {1u, 7u, 90u, 600u, 2500u}) {
    CAPTURE(size);
    const auto d = testing::random_dag(++seed, size, 0.0, [](uint32_t i) { return 1 + i % 5; });
    std::vector<uint64_t> expected;
    for (uint32_t i : d.requested) expected.push_back(d.expected[i]);
    const bool everywhere = seed % 2 == 0;
    const Result r = mpi::get(d.graph, d.request, {.num_workers = 2, .result_on_every_rank = everywhere});
    if (mpi::world_rank() == 0 || everywhere) {
      std::vector<uint64_t> got;
      testing::flatten_values(r, got);
      CHECK(got == expected);
    }
  }
}

TEST_CASE("MPI get: matmul, rfft2, map_overlap, sums along each axis and rechunks equal one process's, bit for bit") {
  const ta::Array x = ta::random({24, 20}, std::vector<std::vector<int64_t>>{{8, 8, 8}, {5, 5, 5, 5}}, 11);
  const ta::Array y = ta::random({20, 18}, std::vector<std::vector<int64_t>>{{5, 5, 5, 5}, {6, 6, 6}}, 12);
  // Each element plus half its neighbour below (wrapping inside the extended
  // block): the halo from the next block changes the values at the block's edge.
  auto smooth = [](const ta::NDArray& b) {
    const ta::NDArray c = b.copy();
    ta::NDArray out = ta::NDArray::empty(ta::DType::float64(), c.shape());
    const int64_t rows = c.shape()[0], cols = c.shape()[1];
    for (int64_t i = 0; i < rows; ++i) {
      for (int64_t j = 0; j < cols; ++j) {
        out.data<double>()[i * cols + j] = c.data<const double>()[i * cols + j] + 0.5 * c.data<const double>()[((i + 1) % rows) * cols + j];
      }
    }
    return out;
  };
  const std::vector<ta::Array> workloads = {
      ta::matmul(x, y),
      ta::rfft2(x),
      ta::map_overlap(smooth, x, {.depth = {2}, .boundary = ta::Boundary::reflect}),
      ta::sum(x, {.axis = {0}}),
      ta::sum(x, {.axis = {1}}),
      ta::sum(x),
      ta::rechunk(x, {24, 4}),
      ta::rechunk(x, {3, 20}),
  };
  for (const ta::Array& a : workloads) {
    CAPTURE(a.name());
    const Graph g = a.graph();
    const Keys keys(a.keys());
    const Result r = mpi::get(g, keys, {.num_workers = 2});
    if (mpi::world_rank() == 0) check_blocks(r, get_sync(g, keys));
  }
}

// Rows to columns across the ranks: only the pieces that change rank travel.
// Both grids split evenly over the ranks, so a rank keeps 1/size of each of its
// row blocks and sends the rest: (size - 1) / size of the array (plus the
// messages' headers and the sum's partials). The fused form sent each whole
// row block to every rank that needed a piece of it: size - 1 times the array.
TEST_CASE("MPI get: a rechunk across ranks sends only the pieces that change rank, at most the array's bytes") {
  const ta::Array x = ta::random({512, 512}, std::vector<std::vector<int64_t>>{std::vector<int64_t>(4, 128), {512}}, 5);
  const ta::Array total = ta::sum(ta::rechunk(x, {512, 128}, {.method = ta::RechunkMethod::tasks}));
  RunStats stats;
  const ta::NDArray got = total.compute({.num_workers = 2, .stats = &stats, .communicator = mpi::world_communicator()});
  int64_t sent = 0;
  for (int64_t b : mpi::world_communicator()->allgather(static_cast<int64_t>(stats.bytes_sent))) sent += b;
  const int64_t bytes = x.nbytes(), n = mpi::world_size();
  CHECK(sent <= bytes);
  CHECK(sent <= bytes * (n - 1) / n + (64 << 10));
  if (mpi::world_rank() == 0) {
    CHECK(same_block(got, total.compute()));
    std::printf("%d ranks: a rechunk of %lld bytes sent %lld bytes\n", mpi::world_size(), static_cast<long long>(bytes),
                static_cast<long long>(sent));
  }
}

namespace {

constexpr int64_t kSentElems = 8192;
constexpr size_t kSentBlock = kSentElems * sizeof(double) + sizeof(std::vector<double>);  // nbytes

// 32 blocks per rank: ("x", i) of 64 KiB and ("c", i); ("y", j) of the first
// half reads its own ("x", j) and ("c", j) and ("x", j + half) of another
// rank, so it stays on its grid's rank and the block travels; ("y", j) of the
// second half reads ("c", j) only. `chained`: ("x", half + k + 1) also reads
// ("y", k) (and its own ("c", ...), so that it stays on its grid's rank too).
Graph far_reads_graph(std::vector<Key>& request, bool chained = false) {
  const int64_t n = 32 * mpi::world_size(), half = n / 2;
  Graph g;
  for (int64_t i = 0; i < n; ++i) {
    if (chained && i > half) {
      g.task(Key("x", {i}), [](double prev, double c) { return std::vector<double>(kSentElems, prev + c); },
             ref(Key("y", {i - half - 1})), ref(Key("c", {i})));
    } else {
      g.task(Key("x", {i}), [i] { return std::vector<double>(kSentElems, static_cast<double>(i)); });
    }
    g.task(Key("c", {i}), [i] { return static_cast<double>(i) / 3.0; });
    if (i < half) {
      g.task(Key("y", {i}), [](const std::vector<double>& x, const std::vector<double>& far, double c) {
               return x[0] + far[0] * c + far.back();
             }, ref(Key("x", {i})), ref(Key("x", {i + half})), ref(Key("c", {i})));
    } else {
      g.task(Key("y", {i}), [](double c) { return c; }, ref(Key("c", {i})));
    }
    request.push_back(Key("y", {i}));
  }
  return g;
}

}  // namespace

// The ranks of the second half compute 16 blocks of 64 KiB each that only
// the first half's tasks read: results for other ranks, released once sent
// rather than kept to the end of the run, so such a rank holds a few at once.
TEST_CASE("MPI get: a result computed for other ranks only is released once sent, not kept to the end") {
  const int size = mpi::world_size();
  std::vector<Key> request;
  const Graph g = far_reads_graph(request);
  RunStats stats;
  const Result r = mpi::get(g, Keys(request), {.num_workers = 2, .stats = &stats});
  if (mpi::world_rank() >= size / 2) {
    CAPTURE(mpi::world_rank());
    CHECK(stats.bytes_sent >= static_cast<size_t>(32) * kSentElems * sizeof(double));
    CHECK(stats.peak_held_bytes <= 4 * kSentBlock);
  }
  if (mpi::world_rank() == 0) {
    const Result expected = get_sync(g, Keys(request));
    for (size_t k = 0; k < request.size(); ++k) CHECK(r[k].as<double>() == expected[k].as<double>());
  }
}

// Under a memory limit a result for other ranks stays the run's (counted,
// spillable) until the message loop made its wire form, and is released then
// (Inbox::sent), not kept to the end. The chained far-reads graph makes
// "then" certain:
//
//   a rank of the second half:  x(h) ───► x(h+1) ───► x(h+2) ...   (64 KiB each)
//                                 │        ▲  │        ▲
//                                 ▼        │  ▼        │
//   a rank of the first half:    y(0) ─────┘ y(1) ─────┘           (a double each)
//
// x(h+k+1) reads y(k), which the peer computed from x(h+k): x(h+k) was sent
// (and its release taken by the run, which takes sends and deliveries in
// order) before x(h+k+1) starts, so the sender holds about one block. Kept to
// the end, it held all 32 (a 64 MiB limit spills none). The unchained graph
// under a limit of 6 blocks checks the values when sent results wait, spill,
// and are released on disk or while being written.
TEST_CASE("MPI get: a result for other ranks is released once its wire form is made, also under a memory limit") {
  for (const bool chained : {true, false}) {
    CAPTURE(chained);
    std::vector<Key> request;
    const Graph g = far_reads_graph(request, chained);
    RunStats stats;
    const size_t limit = chained ? size_t{64} << 20 : 6 * kSentBlock;
    // Every rank returns the values: the requested keys of a rank's run are
    // then the caller's first, and its sends' after them.
    const Result r = mpi::get(g, Keys(request), {.num_workers = 2, .stats = &stats, .memory_limit = limit,
                                                 .result_on_every_rank = chained});
    if (chained && mpi::world_rank() >= mpi::world_size() / 2) {
      CAPTURE(mpi::world_rank());
      CHECK(stats.bytes_sent >= static_cast<size_t>(32) * kSentElems * sizeof(double));
      CHECK(stats.spill_count == 0);
      CHECK(stats.peak_held_bytes <= 2 * kSentBlock);
    }
    if (chained || mpi::world_rank() == 0) {
      const Result expected = get_sync(g, Keys(request));
      for (size_t k = 0; k < request.size(); ++k) CHECK(r[k].as<double>() == expected[k].as<double>());
    }
  }
}

TEST_CASE("MPI get: a delayed pipeline computed with the world communicator equals one process's, bit for bit") {
  std::vector<Delayed<std::vector<double>>> parts;
  for (int64_t i = 0; i < 12; ++i) {
    const auto loaded = delayed(pipeline_load)(i);
    parts.push_back(delayed(pipeline_mix)(loaded, delayed(pipeline_load)(i + 20)));
  }
  const auto total = delayed(pipeline_total)(parts);
  const double expected = total.compute();
  const double got = total.compute({.num_workers = 2, .communicator = mpi::world_communicator(), .result_on_every_rank = true});
  CHECK(std::memcmp(&got, &expected, sizeof got) == 0);
}

// Plain functions, by pointer and named with TESSERA_FN: their keys must be
// the same on every rank, else the run stops at the check that every rank
// built rank 0's graph.
TEST_CASE("MPI get: delayed calls of plain functions have the same keys on every rank and compute across them") {
  std::vector<Delayed<double>> sums;
  for (int64_t i = 0; i < 8; ++i) {
    const auto scaled = delayed(&plain_scaled)(delayed(pipeline_load)(i), 0.5 + static_cast<double>(i));
    sums.push_back(delayed(TESSERA_FN(plain_sum))(scaled));
  }
  const GetOptions across{.num_workers = 2, .communicator = mpi::world_communicator(), .result_on_every_rank = true};
  for (const auto& s : sums) {
    const double expected = s.compute(), got = s.compute(across);
    CHECK(std::memcmp(&got, &expected, sizeof got) == 0);
  }
}

// The all-to-all step of across_graphs.hpp (blocks of 64 KiB) under a limit of
// six blocks per rank: every rank spills and leaves results in MPI while it
// cannot hold them, holds at most its limit plus one task's need (y's five
// blocks), and rank 0 gets one process's values.
TEST_CASE("MPI get: under a memory limit each rank spills, defers receives and stays within its limit; values bit for bit") {
  constexpr size_t kElems = 8192, kBlock = kElems * sizeof(double) + sizeof(std::vector<double>);  // nbytes
  std::vector<Key> request;
  const Graph g = testing::all_to_all_graph(32, kElems, request);
  const size_t limit = 6 * kBlock, need = 5 * kBlock;
  // The rank as a whole: besides, one result's wire form (a block and its header) on its way out.
  const size_t wire = kBlock + 64;
  RunStats stats;
  const Result r = mpi::get(g, Keys(request), {.num_workers = 2, .stats = &stats, .memory_limit = limit});
  CHECK(stats.peak_held_bytes <= limit + need);
  // Beside the run's results: those received and not taken, and the wire
  // forms its sends still keep (MPI's buffers, freed as each send completes).
  CHECK(stats.peak_rank_bytes <= limit + need + wire);
  const auto comm = mpi::world_communicator();
  int64_t deferred = 0, spilled = 0;
  for (int64_t d : comm->allgather(static_cast<int64_t>(stats.receives_deferred))) deferred += d;
  for (int64_t s : comm->allgather(static_cast<int64_t>(stats.spill_count))) spilled += s;
  CHECK(deferred > 0);
  CHECK(spilled > 0);
  if (mpi::world_rank() == 0) {
    const Result expected = get_sync(g, Keys(request));
    for (size_t k = 0; k < request.size(); ++k) {
      const double a = r[k].as<double>(), b = expected[k].as<double>();
      CHECK(std::memcmp(&a, &b, sizeof a) == 0);
    }
    std::printf("%d ranks, limit %zu: rank 0 peak %zu bytes held by its run, %zu by the rank; %lld receives deferred, "
                "%lld results spilled (all ranks)\n",
                mpi::world_size(), limit, stats.peak_held_bytes, stats.peak_rank_bytes, static_cast<long long>(deferred),
                static_cast<long long>(spilled));
  }
}

TEST_CASE("MPI get: a limit too small for a task on rank 1 is a MemoryLimitError on every rank naming rank and task") {
  std::vector<Keys> keys;
  const Graph g = testing::big_block_on_rank_1_graph(mpi::world_size(), keys);
  CHECK_THROWS_WITH_AS(mpi::get(g, Keys(keys), {.num_workers = 2, .memory_limit = 256 << 10}),
                       doctest::Contains("cannot be met: task ('x', 1) needs 1.0 MiB (1048600) on rank 1 "),
                       MemoryLimitError);
}

// The shuffle keeps each partial's buffer in one process: placement keeps a
// partial's tasks on one rank (process-local, placement.hpp); the old blocks
// travel to it and the new blocks leave it. Rows to columns, so that every new
// block reads every old one; on disk and in memory; the automatic choice (which
// picks the shuffle here); an element-wise step after, so new blocks travel.
TEST_CASE("MPI get: the shuffle rechunk across ranks equals one process's, bit for bit (shuffle, automatic)") {
  const ta::Array x = ta::random({64, 48}, {4, 48}, 21);
  REQUIRE(ta::choose_rechunk_method(x.chunks().sizes(), ta::Chunks({{64}, std::vector<int64_t>(12, 4)}).sizes()) ==
          ta::RechunkMethod::shuffle);
  const std::vector<ta::RechunkOptions> methods = {
      {.method = ta::RechunkMethod::shuffle},
      {.method = ta::RechunkMethod::shuffle, .disk = false},
      {.method = ta::RechunkMethod::automatic},
  };
  for (const ta::RechunkOptions& options : methods) {
    CAPTURE(static_cast<int>(options.method));
    CAPTURE(options.disk);
    const ta::Array y = ta::rechunk(x, {-1, 4}, options);
    for (const ta::Array& a : {y, y * 2.0 + 1.0}) {
      const Graph g = a.graph();
      const Keys keys(a.keys());
      const Result r = mpi::get(g, keys, {.num_workers = 2});
      if (mpi::world_rank() == 0) check_blocks(r, get_sync(g, keys));
    }
  }
}

TEST_CASE("MPI get: Array::compute with the world communicator assembles the array on rank 0, bit for bit") {
  const ta::Array x = ta::random({12, 12}, std::vector<std::vector<int64_t>>{{4, 4, 4}, {6, 6}}, 7);
  const ta::Array y = ta::sum(x + ta::transpose(x), {.axis = {1}, .keepdims = true}) + x;
  const ta::NDArray got = y.compute({.num_workers = 2, .communicator = mpi::world_communicator()});
  if (mpi::world_rank() == 0) {
    CHECK(same_block(got, y.compute()));
  } else {
    CHECK(!got.has_value());
  }
  const ta::NDArray everywhere =
      y.compute({.num_workers = 2, .communicator = mpi::world_communicator(), .result_on_every_rank = true});
  CHECK(same_block(everywhere, y.compute()));
}

TEST_CASE("MPI get: a task that throws on the last rank stops every rank, each naming key and rank") {
  const int n = mpi::world_size();
  // One block per rank; every ("y", i) reads the last rank's ("x", n - 1), which throws.
  Graph g;
  std::vector<Keys> keys;
  for (int64_t i = 0; i < n; ++i) {
    const bool fails = i == n - 1;
    auto body = [fails](std::span<const Value>) -> Value {
      if (fails) throw std::runtime_error("kaboom");
      return Value(uint64_t{1});
    };
    g.put(Key("x", {i}), Task::from_args(fn("boom", body), {}));
    g.task(Key("y", {i}), [](uint64_t a, uint64_t b) { return a + b; }, ref(Key("x", {i})), ref(Key("x", {n - 1})));
    keys.emplace_back(Key("y", {i}));
  }
  const std::string message =
      "task ('x', " + std::to_string(n - 1) + ") (boom) failed: on rank " + std::to_string(n - 1) + ": kaboom";
  CHECK_THROWS_WITH_AS(mpi::get(g, Keys(keys), {.num_workers = 2}), message.c_str(), TaskError);
}

// A result of a type without a wire form cannot reach the rank that reads it:
// its rank fails, and every other rank hears of it instead of waiting.
//   ("p", 0) (rank 0, no wire form) --> ("q", i) on every rank
TEST_CASE("MPI get: a result that cannot travel stops every rank, naming its type") {
  struct NoWire {
    int v = 1;
  };
  const int n = mpi::world_size();
  Graph g;
  g.task(Key("p", {0}), [] { return NoWire{}; });
  std::vector<Keys> keys;
  for (int64_t i = 0; i < n; ++i) {
    g.task(Key("q", {i}), [i](const NoWire& p, int64_t j) { return uint64_t(p.v + i + j); }, ref(Key("p", {0})), i);
    keys.emplace_back(Key("q", {i}));
  }
  CHECK_THROWS_WITH_AS(mpi::get(g, Keys(keys), {.num_workers = 2}), doctest::Contains("no wire form"), Error);
  // A requested result of the last rank's, on its way to rank 0.
  Graph h;
  std::vector<Keys> wanted;
  for (int64_t i = 0; i < n; ++i) {
    h.task(Key("r", {i}), [] { return NoWire{}; });
    wanted.emplace_back(Key("r", {i}));
  }
  CHECK_THROWS_WITH_AS(mpi::get(h, Keys(wanted), {.num_workers = 2}), doctest::Contains("no wire form"), Error);
}

// The last rank names its blocks otherwise (as per-process array tokens or
// delayed keys would): every rank refuses the run before any task, naming it.
TEST_CASE("MPI get: a rank that built another graph than rank 0's stops every rank, naming it") {
  const int n = mpi::world_size();
  const std::string name = mpi::world_rank() == n - 1 ? "x-other" : "x";
  Graph g;
  std::vector<Keys> keys;
  for (int64_t i = 0; i < n; ++i) {
    g.task(Key(name, {i}), [i] { return uint64_t(i); });
    g.task(Key("y", {i}), [](uint64_t x) { return x + 1; }, ref(Key(name, {i})));
    keys.emplace_back(Key("y", {i}));
  }
  const std::string message =
      "expected every rank to build rank 0's graph, found another on rank " + std::to_string(n - 1);
  CHECK_THROWS_WITH_AS(mpi::get(g, Keys(keys), {.num_workers = 2}), doctest::Contains(message.c_str()), ValueError);
}
