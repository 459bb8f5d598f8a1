// The SPMD view on MPI ranks. Every rank runs every case: each makes a
// tessera::mpi::Cluster, in which ranks 1..N-1 serve until rank 0, the client,
// stops it; only the client goes on to the checks. Sizes follow the world's
// (mpirun -n 2: one engine; -n 4: three).
#include <doctest/doctest.h>

#include <algorithm>
#include <atomic>
#include <numeric>
#include <thread>
#include <stdexcept>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>

#include "tessera/array/core/ndarray.hpp"
#include "tessera/mpi/cluster.hpp"
#include "tessera/spmd/spmd.hpp"

namespace spmd = tessera::spmd;
namespace ta = tessera::array;
using tessera::mpi::Cluster;

namespace {

int rank_plus(int rank, int offset) { return rank + offset; }
TESSERA_SPMD_REGISTER(rank_plus);

std::vector<int> whoami() {
  const auto& ctx = spmd::context();
  return {ctx.rank(), ctx.size(), ctx.engine_id()};
}
TESSERA_SPMD_REGISTER(whoami);

// Sums over the engines with MPI's built-in ops, and gathers strings.
std::vector<double> collectives() {
  const auto& ctx = spmd::context();
  ctx.barrier();
  const int r = ctx.rank();
  double sum = ctx.allreduce(1.5 * (r + 1), spmd::ReduceOp::sum);
  int64_t mn = ctx.allreduce(static_cast<int64_t>(10 - r), spmd::ReduceOp::min);
  int mx = ctx.allreduce(r * 3, spmd::ReduceOp::max);
  bool any = ctx.allreduce(r == ctx.size() - 1, spmd::ReduceOp::sum);
  int custom = ctx.allreduce(r + 1, [](int a, int b) { return a * b; });  // by allgather
  std::vector<tessera::Value> names = ctx.allgather(tessera::Value("engine-" + std::to_string(ctx.engine_id())));
  std::string joined;
  for (const auto& v : names) joined += v.as<std::string>() + ";";
  ctx.barrier();
  return {sum, static_cast<double>(mn), static_cast<double>(mx), any ? 1.0 : 0.0, static_cast<double>(custom),
          static_cast<double>(joined.size())};
}
TESSERA_SPMD_REGISTER(collectives);

// Engine 0 raises before the barrier the others wait at.
int fail_on_first(int boom_at) {
  const auto& ctx = spmd::context();
  if (ctx.engine_id() == boom_at) throw std::runtime_error("boom on purpose");
  ctx.barrier();
  return ctx.rank();
}
TESSERA_SPMD_REGISTER(fail_on_first);

// The last engine returns without the barrier the others wait at.
int skip_barrier_on_last() {
  const auto& ctx = spmd::context();
  if (ctx.rank() == ctx.size() - 1) return -1;
  ctx.barrier();
  return ctx.rank();
}
TESSERA_SPMD_REGISTER(skip_barrier_on_last);

int barrier_then_rank() {
  spmd::context().barrier();
  return spmd::context().rank();
}
TESSERA_SPMD_REGISTER(barrier_then_rank);

struct Custom : std::runtime_error {
  using std::runtime_error::runtime_error;
};
int throw_custom() { throw Custom("custom failure"); }
TESSERA_SPMD_REGISTER(throw_custom);

// An array's elements doubled; checks that it arrives whole.
ta::NDArray doubled(const ta::NDArray& a) {
  std::vector<double> out(static_cast<size_t>(a.size()));
  for (int64_t i = 0; i < a.size(); ++i) out[static_cast<size_t>(i)] = 2 * a.data<const double>()[i];
  return ta::NDArray::from_vector(out, a.shape());
}
TESSERA_SPMD_REGISTER(doubled);

inline constexpr auto lambda_square = [](int x) { return x * x; };
TESSERA_SPMD_REGISTER(lambda_square);

// Leaves a value in the engine's namespace, as ipyparallel's execute does with globals.
void set_square() {
  const auto& ctx = spmd::context();
  ctx.set("square", ctx.engine_id() * ctx.engine_id());
}
TESSERA_SPMD_REGISTER(set_square);

int not_registered(int x) { return x; }

struct NoWire {
  int x = 0;
};
int takes_anything(const tessera::Value&) { return 0; }
TESSERA_SPMD_REGISTER(takes_anything);
NoWire returns_no_wire() { return {}; }
TESSERA_SPMD_REGISTER(returns_no_wire);

}  // namespace

TEST_CASE("mpi spmd: apply with a Reference, scatter and gather, push and pull") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  const int n = cluster.size();
  auto view = cluster.broadcast_view();
  view.scatter("rank", cluster.ids(), /*flatten=*/true);
  view["offset"] = 10;
  std::vector<int> got = view.apply(rank_plus, spmd::Reference("rank"), spmd::Reference("offset")).get();
  std::vector<int> want(static_cast<size_t>(n));
  std::iota(want.begin(), want.end(), 10);
  CHECK(got == want);
  CHECK(view.gather<int>("rank").get() == cluster.ids());
  CHECK(view["offset"].get<int>() == std::vector<int>(static_cast<size_t>(n), 10));
  view.push({{"a", tessera::Value(std::string("text"))}, {"b", tessera::Value(2.5)}}).get();
  CHECK(view.pull<std::string>("a").get() == std::vector<std::string>(static_cast<size_t>(n), "text"));
  CHECK(view.apply(lambda_square, 7).get() == std::vector<int>(static_cast<size_t>(n), 49));
}

TEST_CASE("mpi spmd: execute leaves names behind; scatter without flatten and gather undo each other") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  auto view = cluster.broadcast_view();
  view.execute(set_square).get();
  std::vector<int> squares;
  for (int id : cluster.ids()) squares.push_back(id * id);
  CHECK(view.pull<int>("square").get() == squares);
  std::vector<double> seq(10);
  std::iota(seq.begin(), seq.end(), 0.5);
  view.scatter("part", seq).get();
  CHECK(view.gather<double>("part").get() == seq);
}

TEST_CASE("mpi spmd: context() gives the rank among the view's engines, which are the ranks 1..N-1") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  std::vector<int> targets = cluster.ids();
  std::reverse(targets.begin(), targets.end());
  auto view = cluster.broadcast_view(targets);
  std::vector<std::vector<int>> got = view.apply(whoami).get();
  REQUIRE(got.size() == targets.size());
  for (size_t slot = 0; slot < got.size(); ++slot) {
    CHECK(got[slot] == std::vector<int>{static_cast<int>(slot), cluster.size(), targets[slot]});
  }
}

TEST_CASE("mpi spmd: barrier, allreduce with MPI's ops and allgather across ranks") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  const int n = cluster.size();
  auto rows = cluster.broadcast_view().apply(collectives).get();
  std::string joined;
  for (int i = 0; i < n; ++i) joined += "engine-" + std::to_string(i) + ";";
  int product = 1;
  for (int i = 1; i <= n; ++i) product *= i;
  for (const auto& row : rows) {
    CHECK(row[0] == doctest::Approx(1.5 * n * (n + 1) / 2));
    CHECK(row[1] == 10 - (n - 1));
    CHECK(row[2] == 3 * (n - 1));
    CHECK(row[3] == 1.0);
    CHECK(row[4] == product);
    CHECK(row[5] == joined.size());
  }
}

TEST_CASE("mpi spmd: an engine's exception is a CompositeError entry and the others leave their barrier") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  auto view = cluster.broadcast_view();
  try {
    view.apply(fail_on_first, 0).get();
    FAIL("expected a CompositeError");
  } catch (const spmd::CompositeError& e) {
    REQUIRE(e.errors().size() == static_cast<size_t>(cluster.size()));
    CHECK(e.errors()[0].str() == "[0:apply] std::runtime_error: boom on purpose");
    for (size_t i = 1; i < e.errors().size(); ++i) {
      CHECK(e.errors()[i].str() ==
            "[" + std::to_string(i) + ":apply] tessera::spmd::BarrierError: barrier broken: engine 0 raised an "
            "error before reaching it");
      CHECK_THROWS_AS(e.raise_exception(i), spmd::BarrierError);
    }
  }
  // The engines' communicator was dropped; the next apply's barrier works.
  std::vector<int> ranks(static_cast<size_t>(cluster.size()));
  std::iota(ranks.begin(), ranks.end(), 0);
  CHECK(view.apply(barrier_then_rank).get() == ranks);
}

TEST_CASE("mpi spmd: an engine that returns without the others' barrier breaks it for them") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  auto view = cluster.broadcast_view();
  const int n = cluster.size();
  if (n == 1) {
    CHECK(view.apply(skip_barrier_on_last).get() == std::vector<int>{-1});
    return;
  }
  try {
    view.apply(skip_barrier_on_last).get();
    FAIL("expected a CompositeError");
  } catch (const spmd::CompositeError& e) {
    // Every engine blames the one that left, also those that first heard of it
    // from another engine that gave up.
    REQUIRE(e.errors().size() == static_cast<size_t>(n - 1));
    for (size_t i = 0; i < e.errors().size(); ++i) {
      CHECK(e.errors()[i].str() ==
            "[" + std::to_string(i) + ":apply] tessera::spmd::BarrierError: barrier broken: engine " +
                std::to_string(n - 1) +
                " returned from the SPMD function without reaching it (every engine of an apply must make the same "
                "collective calls)");
    }
  }
  CHECK(view.apply(barrier_then_rank).get().size() == static_cast<size_t>(n));
}

TEST_CASE("mpi spmd: requests from several threads each reach every engine in one order") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  auto view = cluster.broadcast_view();
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 25; ++i) {
        // Each thread's own name: its push and the apply that reads it stay in order.
        std::string name = absl::StrCat("v", t);
        view.push(name, t * 1000 + i);
        auto got = view.apply(rank_plus, spmd::Reference(name), 1).get();
        for (int g : got) wrong += g != t * 1000 + i + 1;
      }
    });
  }
  for (auto& th : threads) th.join();
  CHECK(wrong == 0);
}

TEST_CASE("mpi spmd: errors name what went wrong") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  auto view = cluster.broadcast_view();
  CHECK_THROWS_WITH_AS(view.apply(not_registered, 1),
                       doctest::Contains("is not registered, and engines on other MPI ranks find functions by "
                                         "name; register it at namespace scope with TESSERA_SPMD_REGISTER("),
                       tessera::Error);
  // A value without a wire form: refused on the client before anything is sent,
  // or, as a result, reported by the engine.
  CHECK_THROWS_WITH_AS(view.apply(takes_anything, tessera::Value(NoWire{})),
                       doctest::Contains("NoWire to another process: it has no wire form"), tessera::TypeError);
  CHECK_THROWS_WITH_AS(view.apply(returns_no_wire).get(),
                       doctest::Contains("[0:apply] tessera::TypeError: cannot send a value of type"),
                       spmd::CompositeError);
  CHECK_THROWS_WITH_AS(view.apply(rank_plus, spmd::Reference("missing"), 1).get(),
                       doctest::Contains("[0:apply] tessera::spmd::NameError: name 'missing' is not defined on engine 0"),
                       spmd::CompositeError);
  CHECK_THROWS_WITH_AS(view.apply(rank_plus, std::string("x"), 1).get(),
                       doctest::Contains("[0:apply] tessera::TypeError: rank_plus: argument 0"),
                       spmd::CompositeError);
  try {
    view.apply(throw_custom).get();
    FAIL("expected a CompositeError");
  } catch (const spmd::CompositeError& e) {
    CHECK(e.errors()[0].type.find("Custom") != std::string::npos);
    CHECK(e.errors()[0].message == "custom failure");
    CHECK_THROWS_AS(e.raise_exception(0), spmd::RemoteException);
  }
  cluster.stop();
  CHECK_THROWS_WITH_AS(view.apply(rank_plus, 1, 2), "apply: the cluster is stopped; start a new Cluster to run more",
                       tessera::Error);
}

TEST_CASE("mpi spmd: an array crosses to the engines and back") {
  Cluster cluster;
  if (!cluster.is_client()) return;
  {
    // 8 MiB pushed, then pulled back from every engine: equal to the last bit.
    std::vector<double> big(1 << 20);
    for (size_t i = 0; i < big.size(); ++i) big[i] = static_cast<double>(i) * 0.25 - 7;
    cluster.broadcast_view().push("big", ta::NDArray::from_vector(big, {1024, 1024})).get();
    for (const ta::NDArray& b : cluster.broadcast_view().pull<ta::NDArray>("big").get()) {
      REQUIRE(b.shape() == ta::Shape{1024, 1024});
      CHECK(std::equal(big.begin(), big.end(), b.data<const double>()));
    }
  }
  std::vector<double> values(1000);
  std::iota(values.begin(), values.end(), 0.5);
  auto a = ta::NDArray::from_vector(values, {10, 100});
  std::vector<ta::NDArray> got = cluster.broadcast_view().apply(doubled, a).get();
  for (const auto& b : got) {
    REQUIRE(b.shape() == a.shape());
    for (size_t i = 0; i < values.size(); ++i) REQUIRE(b.data<const double>()[i] == 2 * values[i]);
  }
}
