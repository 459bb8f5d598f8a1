#include <doctest/doctest.h>
#include <unistd.h>

#include <absl/strings/str_cat.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <string>

#include "tessera/array/ops/creation.hpp"
#include "tessera/array/delayed.hpp"
#include "tessera/delayed/delayed.hpp"
#include "tessera/graph/error.hpp"

using namespace tessera;
namespace ta = tessera::array;

namespace {

int load(int i) { return i * 10; }
int add(int a, int b) { return a + b; }
int twice(int x) { return 2 * x; }
std::string shout(const std::string& s) { return s + "!"; }
int boom(int x) {
  if (x > 0) throw std::runtime_error("kaboom");
  return x;
}
int length(const std::string& s) { return static_cast<int>(s.size()); }
int sum_all(const std::vector<int>& xs) {
  int s = 0;
  for (int x : xs) s += x;
  return s;
}

std::atomic<int> load_calls{0};
int counted_load(int i) {
  load_calls.fetch_add(1);
  return i * 10;
}

}  // namespace

TEST_CASE("equal calls give equal keys; other functions or arguments give others") {
  auto a = delayed(TESSERA_FN(add))(1, 2);
  auto b = delayed(TESSERA_FN(add))(1, 2);
  CHECK(a.key() == b.key());
  CHECK(a.key().name().starts_with("add-"));
  CHECK(delayed(TESSERA_FN(add))(2, 1).key() != a.key());
  CHECK(delayed(TESSERA_FN(add))(1.0, 2).key() != a.key());  // a double is not an int
  CHECK(delayed(TESSERA_FN(twice))(1).key() != delayed(TESSERA_FN(load))(1).key());
  CHECK(delayed(TESSERA_FN(shout))("x").key() == delayed(TESSERA_FN(shout))(std::string("x")).key());
  // A lazy argument hashes by its key.
  CHECK(delayed(TESSERA_FN(twice))(a).key() == delayed(TESSERA_FN(twice))(b).key());
  // Capture-free lambdas hash by type: the same lambda, the same key.
  auto f = [](int x) { return x + 1; };
  CHECK(delayed(f)(3).key() == delayed(f)(3).key());
}

TEST_CASE("calls that cannot be hashed get unique keys") {
  int offset = 5;
  auto with_state = [offset](int x) { return x + offset; };
  auto a = delayed(with_state)(1);
  auto b = delayed(with_state)(1);
  CHECK(a.key() != b.key());
  CHECK(a.compute() == 6);
  struct Opaque {
    int v;
  };
  auto c = delayed([](const Opaque& o) { return o.v; });
  CHECK(c(Opaque{1}).key() != c(Opaque{1}).key());
  CHECK(c(Opaque{7}).compute() == 7);
}

TEST_CASE("lazy arguments become dependencies and compute gives the typed result") {
  auto a = delayed(TESSERA_FN(load))(1);
  auto b = delayed(TESSERA_FN(load))(2);
  Delayed<int> c = delayed(TESSERA_FN(add))(a, b);
  Graph g = c.graph();
  CHECK(g.size() == 3);
  const Node* n = g.find(c.key());
  REQUIRE(n != nullptr);
  CHECK(n->task().dependencies() == std::vector<Key>{a.key(), b.key()});
  CHECK(c.compute() == 30);
  CHECK(delayed(TESSERA_FN(shout))("hi").compute() == "hi!");
}

TEST_CASE("compute runs values together and a shared part once") {
  load_calls = 0;
  auto base = delayed(TESSERA_FN(counted_load))(4);
  auto x = delayed(TESSERA_FN(twice))(base);
  auto y = delayed(TESSERA_FN(add))(base, 1);
  // Built twice: equal keys, merged into one task.
  auto y2 = delayed(TESSERA_FN(add))(delayed(TESSERA_FN(counted_load))(4), 1);
  auto [vx, vy, vy2] = compute({.num_workers = 2}, x, y, y2);
  CHECK(vx == 80);
  CHECK(vy == 41);
  CHECK(vy2 == 41);
  CHECK(load_calls.load() == 1);
  CHECK(merged_graph({x, y, y2}).size() == 3);
}

TEST_CASE("an error in a task surfaces as TaskError naming the function") {
  auto a = delayed(TESSERA_FN(boom))(1);
  auto b = delayed(TESSERA_FN(twice))(a);
  REQUIRE_THROWS_WITH_AS(b.compute(), ("task " + a.key().str() + " (boom) failed: kaboom").c_str(),
                         TaskError);
  try {
    (void)compute(b, delayed(TESSERA_FN(load))(1));
  } catch (const TaskError& e) {
    CHECK(e.function() == "boom");
    CHECK(e.key() == a.key());
  }
}

TEST_CASE("a lazy value of the wrong type for a parameter is a TypeError naming the task") {
  auto n = delayed(TESSERA_FN(load))(1);  // an int
  auto bad = delayed(TESSERA_FN(length))(n);
  REQUIRE_THROWS_WITH_AS(bad.compute(),
                         ("task " + bad.key().str() +
                          " (length): argument 0: expected a value of type std::string, found int")
                             .c_str(),
                         TypeError);
}

TEST_CASE("persist keeps the result as a literal under the same key") {
  load_calls = 0;
  auto a = delayed(TESSERA_FN(counted_load))(3);
  Delayed<int> p = persist(a);
  CHECK(load_calls.load() == 1);
  CHECK(p.key() == a.key());
  Graph g = p.graph();
  REQUIRE(g.size() == 1);
  CHECK(g.node(0).is_literal());
  auto later = delayed(TESSERA_FN(twice))(p);
  CHECK(later.compute() == 60);
  CHECK(load_calls.load() == 1);  // not run again
}

TEST_CASE("to_dot writes every key and every dependency edge, visualize writes a file") {
  auto a = delayed(TESSERA_FN(load))(1);
  auto b = delayed(TESSERA_FN(load))(2);
  auto c = delayed(TESSERA_FN(add))(a, b);
  std::string dot = to_dot({c});
  CHECK(dot.starts_with("digraph tessera {"));
  CHECK(dot.find(absl::StrCat("\"", a.key().str(), "\" -> \"", c.key().str(), "\";")) != std::string::npos);
  CHECK(dot.find(absl::StrCat("\"", b.key().str(), "\" -> \"", c.key().str(), "\";")) != std::string::npos);
  // Labelled as dask's visualize labels: the function, no token.
  CHECK(dot.find(absl::StrCat("\"", c.key().str(), "\" [label=\"add\", shape=ellipse];")) != std::string::npos);
  CHECK(dot.find("label=\"" + c.key().str()) == std::string::npos);

  auto dir = std::filesystem::temp_directory_path() / ("tessera-delayed-" + std::to_string(::getpid()));
  std::filesystem::create_directories(dir);
  visualize({c}, (dir / "c.dot").string());
  std::ifstream in(dir / "c.dot");
  std::stringstream text;
  text << in.rdbuf();
  CHECK(text.str() == dot);
  std::filesystem::remove_all(dir);
}

TEST_CASE("visualize into a missing folder is a StorageError") {
  auto c = delayed(TESSERA_FN(load))(1);
  CHECK_THROWS_AS(visualize({c}, "/nonexistent-tessera-dir/c.dot"), StorageError);
}

TEST_CASE("to_delayed gives one lazy block per block and from_delayed rebuilds the array") {
  ta::Array x = ta::random({7, 5}, {3, 2}, 42);
  ta::NDArray expected = x.compute();
  std::vector<Delayed<ta::NDArray>> blocks = to_delayed(x);
  REQUIRE(blocks.size() == 9);
  CHECK(blocks[0].key() == x.block_key({0, 0}));
  CHECK(blocks[4].compute().shape() == ta::Shape{3, 2});

  ta::Array back = from_delayed(blocks, x.chunks(), x.dtype());
  ta::NDArray got = back.compute({.num_workers = 2});
  REQUIRE(got.shape() == expected.shape());
  for (int64_t i = 0; i < 7; ++i) {
    for (int64_t j = 0; j < 5; ++j) CHECK(got.at<double>({i, j}) == expected.at<double>({i, j}));
  }

  ta::Array one = from_delayed(blocks[8], {1, 1}, x.dtype());
  CHECK(one.compute().at<double>({0, 0}) == expected.at<double>({6, 4}));
}

TEST_CASE("from_delayed with the wrong number of blocks or a block of another shape says so") {
  ta::Array x = ta::random({4}, 2, 1);
  auto blocks = to_delayed(x);
  REQUIRE_THROWS_WITH_AS(from_delayed(blocks, ta::Chunks(std::vector<std::vector<int64_t>>{{1, 1, 2}}), x.dtype()),
                         "from_delayed: chunks ((1, 1, 2),) need 3 blocks, found 2", ChunkError);
  ta::Array wrong = from_delayed(blocks[0], {3}, x.dtype());
  CHECK_THROWS_WITH_AS(wrong.compute(),
                       doctest::Contains("from_delayed: expected a block of shape (3,) and dtype <f8, "
                                         "found shape (2,) and dtype <f8"),
                       TaskError);
}

TEST_CASE("a vector of lazy values is passed as a list of their results") {
  std::vector<Delayed<int>> parts;
  for (int i = 1; i <= 4; ++i) parts.push_back(delayed(TESSERA_FN(load))(i));
  auto total = delayed(TESSERA_FN(sum_all))(parts);
  CHECK(total.compute() == 100);
  CHECK(total.graph().size() == 5);
  CHECK(total.key() == delayed(TESSERA_FN(sum_all))(parts).key());
}

TEST_CASE("compute of one value twice, or of an untyped Value result, gives each") {
  auto a = delayed(TESSERA_FN(load))(2);
  auto [x, y] = compute(a, a);
  CHECK(x == 20);
  CHECK(y == 20);
  Delayed<Value> v = delayed([](std::span<const Value> args) { return args[0]; })(a);
  CHECK(v.compute().as<int>() == 20);
}
