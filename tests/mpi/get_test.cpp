// Any graph across the ranks of mpirun (tessera::mpi::get): dask's graphs with
// checking task bodies and array workloads (transpose, sums along each axis)
// give one process's results on rank 0, bit for bit; a task that throws on the
// last rank reaches every rank. tests/scheduler/across_test.cpp runs the same
// over ranks that are threads.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <vector>

#include "scheduler/across_graphs.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/shape.hpp"
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
    const Result expected = get_sync(g, keys);
    REQUIRE(r.size() == expected.size());
    for (size_t k = 0; k < r.size(); ++k) CHECK(same_block(r[k].as<ta::NDArray>(), expected[k].as<ta::NDArray>()));
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
