// order() on the real graphs of tests/data/graphs, against dask's own figures:
// the eight hand-picked graphs and the wider corpus make_corpus.py exports.
#include <doctest/doctest.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <vector>

#include <oneapi/tbb/task_arena.h>

#include "optimize/eager.hpp"
#include "optimize/in_parallel.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"
#include "tessera/scheduler/get.hpp"

using namespace tessera;

namespace {

// The first eight files; the 25%-fewer figure was measured on them.
const std::vector<std::string> kOriginal = {"cumsum",    "map_overlap", "matmul", "normalize",
                                            "rechunk_rows_to_cols", "tree_sum", "tsqr", "x_plus_xT"};

std::filesystem::path graphs_dir() {
  const char* root = std::getenv("TESSERA_SOURCE_ROOT");
  return std::filesystem::path(root ? root : ".") / "tests/data/graphs";
}

std::string graph_path(const std::string& name) { return (graphs_dir() / (name + ".json")).string(); }

// Every graph file of the folder, by name, sorted.
std::vector<std::string> all_graphs() {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(graphs_dir())) {
    if (e.path().extension() == ".json") names.push_back(e.path().stem().string());
  }
  std::sort(names.begin(), names.end());
  return names;
}

struct Held {
  uint32_t sync = 0;      // results get_sync held at most, with order()
  uint32_t pressure = 0;  // order_pressure of order() on the whole file
};

// Runs the file's graph with get_sync (synthetic results) and checks that the
// model order() optimizes predicts the run exactly (get_sync orders the
// culled graph).
Held run_with_order(const GraphFile& f) {
  RunStats stats;
  GetOptions options;
  options.stats = &stats;
  Result r = get_sync(f.graph, Keys(f.outputs), options);
  Held held;
  held.sync = static_cast<uint32_t>(stats.peak_held);
  const Graph culled = cull(f.graph, f.outputs);
  const CompiledGraph c = compile(culled);
  const std::vector<uint32_t> prio = order(culled, c);
  CHECK(sync_pressure(culled, c, prio, f.outputs) == held.sync);
  // dask's order_max_pressure is of the whole file's graph.
  held.pressure = order_pressure(f.graph, order(f.graph));
  return held;
}

struct Sums {
  uint64_t dask = 0, ours = 0;
};

// Runs each named graph with order(), prints a table row per graph beside
// dask's figures and the sums below, and checks that none holds more results
// than dask's get_sync did.
Sums check_graphs(const std::vector<std::string>& names) {
  std::printf("%-22s %6s %14s %14s %12s %12s\n", "graph", "tasks", "dask sync_held", "ours sync_held",
              "dask order_p", "ours order_p");
  Sums sums;
  for (const std::string& name : names) {
    CAPTURE(name);
    GraphFile f = load_graph_file(graph_path(name));
    REQUIRE(f.reference);
    const Held h = run_with_order(f);
    const uint64_t dask = *f.reference->sync_max_held;
    std::printf("%-22s %6zu %14llu %14u %12llu %12u\n", name.c_str(), f.graph.size(),
                static_cast<unsigned long long>(dask), h.sync,
                static_cast<unsigned long long>(*f.reference->order_max_pressure), h.pressure);
    CHECK(h.sync <= dask);
    sums.dask += dask;
    sums.ours += h.sync;
  }
  std::printf("%-22s %6s %14llu %14llu (%.0f%%)\n", "sum", "", static_cast<unsigned long long>(sums.dask),
              static_cast<unsigned long long>(sums.ours), 100.0 * double(sums.ours) / double(sums.dask));
  return sums;
}

}  // namespace

TEST_CASE("the folder holds the original eight graphs and the corpus beside them") {
  const std::vector<std::string> names = all_graphs();
  for (const std::string& name : kOriginal) {
    CAPTURE(name);
    CHECK(std::binary_search(names.begin(), names.end(), name));
  }
  CHECK(names.size() >= kOriginal.size() + 24);
}

TEST_CASE("the pressure metric and the get_sync model reproduce dask's figures under dask's order") {
  for (const std::string& name : all_graphs()) {
    CAPTURE(name);
    GraphFile f = load_graph_file(graph_path(name));
    REQUIRE(f.reference);
    const CompiledGraph c = compile(f.graph);
    std::vector<uint32_t> dask(c.size());
    for (uint32_t i = 0; i < c.size(); ++i) dask[i] = f.reference->dask_order.at(f.graph.key(i));
    CHECK(order_pressure(c, dask) == *f.reference->order_max_pressure);
    // dask's get_sync runs an alias as a task of its own; tessera resolves
    // aliases, so the run is the same only where the file has none.
    bool aliases = false;
    for (uint32_t i = 0; i < c.size(); ++i) aliases |= f.graph.node(i).is_alias();
    if (!aliases) CHECK(sync_pressure(f.graph, c, dask, f.outputs) == *f.reference->sync_max_held);
  }
}

// The acceptance figure of tessera's order on the first eight files: get_sync
// (dask's get_async rules) with tessera's order holds at most as many results
// as dask 2022.12 did on each, and at most 75% of dask's total.
TEST_CASE("get_sync with order holds no more results than dask's, and 25% fewer overall") {
  const Sums sums = check_graphs(kOriginal);
  CHECK(sums.dask == 836);
  CHECK(sums.ours * 4 <= sums.dask * 3);
}

// Every graph in the folder, the corpus included: never more results held
// than dask's get_sync held on the same graph.
TEST_CASE("get_sync with order holds no more results than dask's on every graph file") {
  check_graphs(all_graphs());
}

namespace {

// `copies` disjoint copies of the structure of a file's graph (each task a
// synthetic function of its dependencies, each literal a literal), so that a
// small file makes a graph large enough for order() to take its steps at once.
Graph copies_of(const GraphFile& f, int copies) {
  Graph g;
  auto renamed = [](const Key& k, int copy) {
    const std::string name = std::to_string(copy) + "/" + std::string(k.name());
    return k.is_tuple() ? Key(name, k.index()) : Key(name);
  };
  for (int copy = 0; copy < copies; ++copy) {
    for (uint32_t i = 0; i < f.compiled.size(); ++i) {
      const Node& node = f.graph.node(i);
      if (node.is_literal()) {
        g.put(renamed(f.graph.key(i), copy), node.literal());
        continue;
      }
      std::vector<Arg> args;
      for (uint32_t d : f.compiled.dependencies(i)) args.emplace_back(ref(renamed(f.graph.key(d), copy)));
      g.put(renamed(f.graph.key(i), copy), Task::from_args(fn("f", [](std::span<const Value>) { return 0; }),
                                                           std::move(args)));
    }
  }
  return g;
}

}  // namespace

// order() runs its independent analyses and its first two alternative
// sequences at once on large graphs; when the first alternative wins, the
// second is made again from it, as it is when they run one after another.
TEST_CASE("order() gives the same priorities on one thread and on two") {
  tbb::task_arena one(1), two(2);
  size_t large = 0;
  for (const std::string& name : all_graphs()) {
    CAPTURE(name);
    const GraphFile f = load_graph_file(graph_path(name));
    const int copies = static_cast<int>(detail::kParallelNodes / std::max<size_t>(f.graph.size(), 1) + 1);
    if (copies > 64) continue;  // a graph of a few nodes: its copies are all alike
    const Graph g = copies_of(f, copies);
    REQUIRE(g.size() >= detail::kParallelNodes);
    const CompiledGraph c = compile(g);
    const std::vector<uint32_t> alone = one.execute([&] { return order(g, c); });
    const std::vector<uint32_t> at_once = two.execute([&] { return order(g, c); });
    CHECK(alone == at_once);
    ++large;
  }
  CHECK(large >= 20);
}

// order() drops a candidate once the model's run of it holds as many results
// as the best order so far: the run that gives up says so with the count it
// gave up at, and one that never reaches it gives the whole run's figure.
TEST_CASE("the model's run stops at the count its caller gives up at, and only there") {
  for (const std::string& name : all_graphs()) {
    CAPTURE(name);
    const GraphFile f = load_graph_file(graph_path(name));
    const detail::EagerGraph eg(f.graph, f.compiled, {});
    std::vector<uint32_t> prio = order(f.graph, f.compiled);
    for (int reversed = 0; reversed < 2; ++reversed) {
      CAPTURE(reversed);
      const uint32_t full = detail::eager_max_held(eg, prio);
      REQUIRE(full > 1);
      for (const uint32_t give_up_at : {1u, full - 1, full, full + 1, UINT32_MAX}) {
        CAPTURE(give_up_at);
        CHECK(detail::eager_max_held(eg, prio, give_up_at) == std::min(full, give_up_at));
      }
      for (uint32_t& p : prio) p = static_cast<uint32_t>(prio.size()) - 1 - p;
    }
  }
}
