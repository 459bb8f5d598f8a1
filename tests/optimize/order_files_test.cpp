// order() on the real graphs of tests/data/graphs, against dask's own figures.
#include <doctest/doctest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "tessera/graph/graph_file.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"

using namespace tessera;

namespace {

const std::vector<std::string> kGraphs = {"cumsum",    "map_overlap", "matmul", "normalize",
                                          "rechunk_rows_to_cols", "tree_sum", "tsqr", "x_plus_xT"};

std::string graph_path(const std::string& name) {
  const char* root = std::getenv("TESSERA_SOURCE_ROOT");
  return std::string(root ? root : ".") + "/tests/data/graphs/" + name + ".json";
}

}  // namespace

TEST_CASE("the pressure metric and the get_sync model reproduce dask's figures under dask's order") {
  for (const std::string& name : kGraphs) {
    CAPTURE(name);
    GraphFile f = load_graph_file(graph_path(name));
    REQUIRE(f.reference);
    const CompiledGraph c = compile(f.graph);
    std::vector<uint32_t> dask(c.size());
    for (uint32_t i = 0; i < c.size(); ++i) dask[i] = f.reference->dask_order.at(f.graph.key(i));
    CHECK(order_pressure(c, dask) == *f.reference->order_max_pressure);
    CHECK(sync_pressure(f.graph, c, dask, f.outputs) == *f.reference->sync_max_held);
  }
}

TEST_CASE("order holds no more results than dask's under get_sync, and 25% fewer overall") {
  uint32_t dask_sum = 0, ours_sum = 0;
  std::printf("%-22s %6s %6s %6s %6s\n", "graph", "dask", "ours", "dask_p", "ours_p");
  for (const std::string& name : kGraphs) {
    CAPTURE(name);
    GraphFile f = load_graph_file(graph_path(name));
    const CompiledGraph c = compile(f.graph);
    const std::vector<uint32_t> prio = order(f.graph, c);
    const uint32_t held = sync_pressure(f.graph, c, prio, f.outputs);
    const uint32_t pressure = order_pressure(c, prio);
    std::printf("%-22s %6u %6u %6u %6u\n", name.c_str(), *f.reference->sync_max_held, held,
                *f.reference->order_max_pressure, pressure);
    CHECK(held <= *f.reference->sync_max_held);
    dask_sum += *f.reference->sync_max_held;
    ours_sum += held;
  }
  std::printf("%-22s %6u %6u\n", "sum", dask_sum, ours_sum);
  CHECK(dask_sum == 836);
  CHECK(ours_sum * 4 <= dask_sum * 3);
}
