#include "dags.hpp"

#include <cstdio>
#include <fstream>
#include <stdexcept>

#include <nlohmann/json.hpp>

namespace tessera::bench {

// The tiny task functions (the dask peer runs the same three).
int64_t inc(int64_t x) { return x + 1; }
int64_t add(int64_t a, int64_t b) { return a + b; }
int64_t mean3(int64_t a, int64_t b, int64_t c) { return (a + b + c) / 3; }  // bounded over 300 rows

uint32_t DagShape::add(Key key, std::initializer_list<uint32_t> ds) {
  keys.push_back(std::move(key));
  deps.insert(deps.end(), ds.begin(), ds.end());
  dep_offsets.push_back(static_cast<uint32_t>(deps.size()));
  return size() - 1;
}

namespace {

DagShape named(std::string name, std::string description) {
  DagShape s;
  s.name = std::move(name);
  s.description = std::move(description);
  return s;
}

}  // namespace

DagShape tree_sum_shape(uint32_t leaves) {
  DagShape s = named("tree_sum", std::to_string(leaves) + " tiny tasks + binary-tree sum");
  std::vector<uint32_t> level;
  for (uint32_t i = 0; i < leaves; ++i) level.push_back(s.add(Key("inc", {i}), {}));
  for (int64_t depth = 1; level.size() > 1; ++depth) {
    std::vector<uint32_t> next;
    for (size_t i = 0; i < level.size(); i += 2) {
      const auto j = static_cast<int64_t>(i / 2);
      if (i + 1 < level.size()) next.push_back(s.add(Key("sum", {depth, j}), {level[i], level[i + 1]}));
      else next.push_back(s.add(Key("sum", {depth, j}), {level[i]}));
    }
    level = std::move(next);
  }
  s.outputs = level;
  return s;
}

DagShape chains_shape(uint32_t chains, uint32_t length) {
  DagShape s = named("chains", std::to_string(chains) + " chains of " + std::to_string(length) + " tasks");
  for (uint32_t c = 0; c < chains; ++c) {
    uint32_t prev = s.add(Key("chain", {c, 0}), {});
    for (uint32_t i = 1; i < length; ++i) prev = s.add(Key("chain", {c, i}), {prev});
    s.outputs.push_back(prev);
  }
  return s;
}

DagShape stencil_shape(uint32_t rows, uint32_t cols) {
  DagShape s = named("stencil", std::to_string(rows) + "x" + std::to_string(cols) + " stencil, 3 reads/task");
  for (uint32_t j = 0; j < cols; ++j) s.add(Key("stencil", {0, j}), {});
  for (uint32_t r = 1; r < rows; ++r) {
    const uint32_t row_before = (r - 1) * cols;
    for (uint32_t j = 0; j < cols; ++j) {
      s.add(Key("stencil", {r, j}),
            {row_before + (j + cols - 1) % cols, row_before + j, row_before + (j + 1) % cols});
    }
  }
  for (uint32_t j = 0; j < cols; ++j) s.outputs.push_back((rows - 1) * cols + j);
  return s;
}

Graph build_graph(const DagShape& shape) {
  Graph g;
  g.reserve(shape.size());
  for (uint32_t i = 0; i < shape.size(); ++i) {
    const auto d = shape.dependencies(i);
    const Key& k = shape.keys[i];
    switch (d.size()) {
      case 0: g.task(k, inc, int64_t{i}); break;
      case 1: g.task(k, inc, ref(shape.keys[d[0]])); break;
      case 2: g.task(k, add, ref(shape.keys[d[0]]), ref(shape.keys[d[1]])); break;
      case 3: g.task(k, mean3, ref(shape.keys[d[0]]), ref(shape.keys[d[1]]), ref(shape.keys[d[2]])); break;
      default: throw std::logic_error("overhead DAGs read at most three tasks");
    }
  }
  return g;
}

std::vector<Key> output_keys(const DagShape& shape) {
  std::vector<Key> out;
  for (uint32_t o : shape.outputs) out.push_back(shape.keys[o]);
  return out;
}

void write_graph_file(const DagShape& shape, const std::string& path) {
  static const char* const funcs[] = {"inc", "inc", "add", "mean3"};
  auto key_json = [&](uint32_t i) { return nlohmann::json::parse(shape.keys[i].json()); };
  nlohmann::json tasks = nlohmann::json::array();
  for (uint32_t i = 0; i < shape.size(); ++i) {
    nlohmann::json deps = nlohmann::json::array();
    for (uint32_t d : shape.dependencies(i)) deps.push_back(key_json(d));
    tasks.push_back({{"key", key_json(i)}, {"deps", deps}, {"func", funcs[deps.size()]}, {"nbytes", 8}});
  }
  nlohmann::json outputs = nlohmann::json::array();
  for (uint32_t o : shape.outputs) outputs.push_back(key_json(o));
  nlohmann::json file = {{"format", "tessera-graph/1"}, {"name", shape.name},
                         {"source", shape.description}, {"tasks", tasks}, {"outputs", outputs}};
  std::ofstream os(path);
  os << file.dump();
  if (!os) throw std::runtime_error("cannot write " + path);
}

}  // namespace tessera::bench
