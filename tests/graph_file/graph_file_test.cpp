// The tessera-graph/1 loader (graph module; tested here beside its users).
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include <unistd.h>

#include "optimize/evaluate.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/scheduler/plan.hpp"

using namespace tessera;

namespace {

// A graph file in a temporary directory, removed afterwards.
class TempFile {
 public:
  explicit TempFile(const std::string& text) {
    char dir[] = "/tmp/tessera-graph-XXXXXX";
    REQUIRE(mkdtemp(dir) != nullptr);
    dir_ = dir;
    path_ = dir_ + "/g.json";
    std::ofstream(path_) << text;
  }
  ~TempFile() {
    std::remove(path_.c_str());
    rmdir(dir_.c_str());
  }
  const std::string& path() const { return path_; }

 private:
  std::string dir_, path_;
};

std::string file_with_tasks(const std::string& tasks, const std::string& outputs = R"([["b", 0]])") {
  return R"({"format": "tessera-graph/1", "name": "t", "source": "test", "tasks": [)" + tasks +
         R"(], "outputs": )" + outputs + "}";
}

const std::string kTasks =
    R"({"key": "lit", "deps": [], "func": "literal", "nbytes": 16},
       {"key": ["a", 0], "deps": ["lit"], "func": "make", "nbytes": 100},
       {"key": ["b", 0], "deps": [["a", 0], "lit"], "func": "combine", "nbytes": 40},
       {"key": ["c", "extra", 1.5, 2], "deps": [["b", 0]], "func": "literal", "nbytes": 40})";

}  // namespace

TEST_CASE("a graph file loads as synthetic tasks of the recorded sizes") {
  TempFile f(file_with_tasks(kTasks));
  GraphFile g = load_graph_file(f.path());
  CHECK(g.name == "t");
  CHECK(g.source == "test");
  REQUIRE(g.graph.size() == 4);
  CHECK(g.graph.at("lit").is_literal());
  const Task& b = g.graph.at(Key("b", {0})).task();
  CHECK(b.function_name() == "combine");
  CHECK(b.dependencies() == std::vector<Key>{Key("a", {0}), "lit"});
  CHECK(g.outputs == std::vector<Key>{Key("b", {0})});
  CHECK(g.nbytes == std::vector<uint64_t>{16, 100, 40, 40});
  CHECK(!g.reference);
  Value v = testing::evaluate(g.graph, Key("b", {0}));
  CHECK(v.nbytes() == 40);
  CHECK(v.as<SyntheticResult>().data.size() == 40);  // allocated when the task ran
  CHECK(testing::evaluate(g.graph, "lit").as<SyntheticResult>().data.empty());  // a literal only reports its size
  CHECK(testing::evaluate(g.graph, "lit").nbytes() == 16);
  // A literal with one dependency is dask's alias; a non-integer element folds into the name.
  CHECK(g.graph.at(Key("c/extra/1.5", {2})).is_alias());
}

TEST_CASE("a graph file's reference figures load") {
  TempFile f(R"({"format": "tessera-graph/1", "tasks": [{"key": "x", "deps": [], "func": "f", "nbytes": 8}],
    "outputs": ["x"], "reference": {"tool": "dask", "dask_order": {"\"x\"": 0}, "order_max_pressure": 1,
    "sync_max_held": 1, "sync_max_held_bytes": 8}})");
  GraphFile g = load_graph_file(f.path());
  REQUIRE(g.reference);
  CHECK(g.reference->tool == "dask");
  CHECK(g.reference->dask_order.at("x") == 0);
  CHECK(g.reference->order_max_pressure == 1u);
  CHECK(g.reference->sync_max_held == 1u);
  CHECK(g.reference->sync_max_held_bytes == 8u);
}

TEST_CASE("an unreadable graph file is a StorageError naming the path") {
  REQUIRE_THROWS_WITH_AS(load_graph_file("/nonexistent/g.json"),
                         "/nonexistent/g.json: cannot open graph file: No such file or directory", StorageError);
}

TEST_CASE("bad JSON is a StorageError naming the file") {
  TempFile f(R"({"format": "tessera-graph/1", "tasks": [)");
  REQUIRE_THROWS_WITH_AS(load_graph_file(f.path()),
                         doctest::Contains((f.path() + ": not valid JSON: ").c_str()), StorageError);
}

TEST_CASE("malformed fields are StorageErrors saying what was expected") {
  TempFile wrong_format(R"({"format": "tessera-graph/2", "tasks": [], "outputs": []})");
  REQUIRE_THROWS_WITH_AS(load_graph_file(wrong_format.path()),
                         (wrong_format.path() + ": expected format \"tessera-graph/1\", found \"tessera-graph/2\"").c_str(),
                         StorageError);
  TempFile no_deps(file_with_tasks(R"({"key": "x", "func": "f", "nbytes": 1})", "[]"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(no_deps.path()),
                         (no_deps.path() + ": tasks[0] has no \"deps\" field").c_str(), StorageError);
  TempFile bad_key(file_with_tasks(R"({"key": 7, "deps": [], "func": "f", "nbytes": 1})", "[]"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(bad_key.path()),
                         (bad_key.path() + ": tasks[0].key: expected a key (a string or [name, i, ...]), found 7").c_str(),
                         StorageError);
  TempFile twice(file_with_tasks(R"({"key": "x", "deps": [], "func": "f", "nbytes": 1},
                                    {"key": "x", "deps": [], "func": "f", "nbytes": 1})", "[]"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(twice.path()),
                         (twice.path() + ": tasks[1]: the key x appears twice").c_str(), StorageError);
}

TEST_CASE("a dependency that is not a key is a MissingKeyError naming the file and the task") {
  TempFile f(file_with_tasks(R"({"key": ["b", 0], "deps": [["a", 9]], "func": "f", "nbytes": 1})"));
  REQUIRE_THROWS_WITH_AS(
      load_graph_file(f.path()),
      (f.path() + ": missing key ('a', 9): task ('b', 0) depends on it, but the graph has no such key").c_str(),
      MissingKeyError);
  TempFile out(file_with_tasks(R"({"key": "x", "deps": [], "func": "f", "nbytes": 1})", R"(["y"])"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(out.path()),
                         (out.path() + ": outputs: missing key y: it was requested, but the graph has no such key").c_str(),
                         MissingKeyError);
}

TEST_CASE("a cycle is a CycleError naming the file and printing the cycle") {
  TempFile f(file_with_tasks(R"({"key": "p", "deps": ["q"], "func": "f", "nbytes": 1},
                                {"key": "q", "deps": ["p"], "func": "f", "nbytes": 1})",
                             R"(["p"])"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(f.path()), (f.path() + ": cycle in graph: p -> q -> p").c_str(), CycleError);
}

TEST_CASE("a key nested 100,000 deep is refused with a short message naming the file") {
  const std::string deep = std::string(100000, '[') + "\"k\"" + std::string(100000, ']');
  TempFile f(file_with_tasks(R"({"key": )" + deep + R"(, "deps": [], "func": "f", "nbytes": 1})", "[]"));
  try {
    load_graph_file(f.path());
    FAIL("expected a StorageError");
  } catch (const StorageError& e) {
    const std::string what = e.what();
    CHECK(what.rfind(f.path() + ": tasks[0].key: expected a key (a string or [name, i, ...]), found [[[[", 0) == 0);
    CHECK(what.size() < 200);
  }
}

TEST_CASE("a key nested inside a key is refused, quoting a short prefix") {
  const std::string nested = R"(["a", [)" + std::string(500, '1') + "]]";
  TempFile f(file_with_tasks(R"({"key": )" + nested + R"(, "deps": [], "func": "f", "nbytes": 1})", "[]"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(f.path()),
                         (f.path() + ": tasks[0].key: expected key elements that are strings or numbers, found [" +
                          std::string(39, '1') + "...")
                             .c_str(),
                         StorageError);
}

TEST_CASE("reference figures keep all 64 bits") {
  TempFile f(R"({"format": "tessera-graph/1", "tasks": [{"key": "x", "deps": [], "func": "f", "nbytes": 8}],
    "outputs": ["x"], "reference": {"order_max_pressure": 4294967297, "sync_max_held": 8589934592,
    "sync_max_held_bytes": 18446744073709551615}})");
  GraphFile g = load_graph_file(f.path());
  REQUIRE(g.reference);
  CHECK(*g.reference->order_max_pressure == 4294967297u);
  CHECK(*g.reference->sync_max_held == 8589934592u);
  CHECK(*g.reference->sync_max_held_bytes == 18446744073709551615u);
}

TEST_CASE("a key index beyond a signed 64-bit integer is refused, not wrapped to -1") {
  TempFile f(file_with_tasks(R"({"key": ["a", 18446744073709551615], "deps": [], "func": "f", "nbytes": 1})", "[]"));
  REQUIRE_THROWS_WITH_AS(
      load_graph_file(f.path()),
      (f.path() + ": tasks[0].key: key index 18446744073709551615 does not fit in a signed 64-bit integer").c_str(),
      StorageError);
}

TEST_CASE("a negative figure or size is refused saying what was found") {
  TempFile fig(R"({"format": "tessera-graph/1", "tasks": [], "outputs": [], "reference": {"sync_max_held": -1}})");
  REQUIRE_THROWS_WITH_AS(load_graph_file(fig.path()),
                         (fig.path() + ": reference.sync_max_held: expected a non-negative integer, found -1").c_str(),
                         StorageError);
  TempFile size(file_with_tasks(R"({"key": "x", "deps": [], "func": "f", "nbytes": 2.5})", "[]"));
  REQUIRE_THROWS_WITH_AS(load_graph_file(size.path()),
                         (size.path() + ": tasks[0].nbytes: expected a non-negative integer, found 2.5").c_str(),
                         StorageError);
}

TEST_CASE("a literal's size is recorded, not allocated, when the file is read") {
  // 1 TiB: reading the file must not try to hold it.
  TempFile f(file_with_tasks(R"({"key": "big", "deps": [], "func": "literal", "nbytes": 1099511627776})", R"(["big"])"));
  GraphFile g = load_graph_file(f.path());
  CHECK(g.nbytes == std::vector<uint64_t>{1099511627776u});
  CHECK(testing::evaluate(g.graph, "big").nbytes() == 1099511627776u);
}

TEST_CASE("a dask_order name that is not a key in JSON text is refused") {
  TempFile f(R"({"format": "tessera-graph/1", "tasks": [{"key": "x", "deps": [], "func": "f", "nbytes": 8}],
    "outputs": ["x"], "reference": {"dask_order": {"x": 0}}})");
  REQUIRE_THROWS_WITH_AS(load_graph_file(f.path()),
                         (f.path() + ": reference.dask_order: the name x is not a key in JSON text").c_str(),
                         StorageError);
}

TEST_CASE("text after the top-level object is not valid JSON") {
  TempFile f(R"({"format": "tessera-graph/1", "tasks": [], "outputs": []} {})");
  REQUIRE_THROWS_WITH_AS(load_graph_file(f.path()), doctest::Contains((f.path() + ": not valid JSON: ").c_str()),
                         StorageError);
}

TEST_CASE("ResultMemory::counted: tasks report their recorded size and allocate nothing") {
  TempFile f(file_with_tasks(R"({"key": ["b", 0], "deps": [], "func": "make", "nbytes": 4611686018427387904})"));
  GraphFile g = load_graph_file(f.path(), ResultMemory::counted);
  const Value v = testing::evaluate(g.graph, Key("b", {0}));
  CHECK(v.nbytes() == uint64_t{1} << 62);
  CHECK(v.as<SyntheticResult>().data.empty());
}

//   lit (literal, 1000 B) --> x (10 B) --+--> y (30 B, reads x twice)   requested
//                                        +--> z (500 B)                 not requested
//   w (25 B)
TEST_CASE("check_memory_limit: each task's distinct inputs and result, then the requested results together") {
  const std::string tasks =
      R"({"key": "lit", "deps": [], "func": "literal", "nbytes": 1000},
         {"key": "x", "deps": ["lit"], "func": "make", "nbytes": 10},
         {"key": "y", "deps": ["x", "x"], "func": "pair", "nbytes": 30},
         {"key": "z", "deps": ["x"], "func": "big", "nbytes": 500},
         {"key": "w", "deps": [], "func": "make", "nbytes": 25})";
  TempFile f(file_with_tasks(tasks, R"(["y"])"));
  const GraphFile g = load_graph_file(f.path());
  const Plan plan(g.graph, g.compiled, {}, Keys(g.outputs));
  // y needs 10 + 30 (x once); the literal holds nothing; z is not needed.
  CHECK_NOTHROW(check_memory_limit(g, plan, 40));
  REQUIRE_THROWS_WITH_AS(check_memory_limit(g, plan, 39),
                         "memory limit of 39 bytes (39) cannot be met: task y needs 40 bytes (40) for its inputs and its "
                         "result together; 0 bytes held",
                         MemoryLimitError);
  // y and w requested (y twice): 30 + 25 returned together.
  const Plan both(g.graph, g.compiled, {}, Keys(std::vector<Key>{"y", "w", "y"}));
  CHECK_NOTHROW(check_memory_limit(g, both, 55));
  REQUIRE_THROWS_WITH_AS(check_memory_limit(g, both, 54),
                         doctest::Contains("task w needs 55 bytes (55) with the requested results before it, all "
                                           "returned in memory together (2 requested, 55 bytes in all)"),
                         MemoryLimitError);
}

TEST_CASE("check_memory_limit: recorded sizes that overflow 64 bits when added are still too large") {
  const std::string tasks =
      R"({"key": "a", "deps": [], "func": "make", "nbytes": 18446744073709551615},
         {"key": "b", "deps": [], "func": "make", "nbytes": 1},
         {"key": "c", "deps": ["a", "b"], "func": "add", "nbytes": 1})";
  TempFile f(file_with_tasks(tasks, R"(["c"])"));
  const GraphFile g = load_graph_file(f.path(), ResultMemory::counted);
  const Plan plan(g.graph, g.compiled, {}, Keys(g.outputs));
  CHECK_THROWS_AS(check_memory_limit(g, plan, SIZE_MAX - 1), MemoryLimitError);
}
