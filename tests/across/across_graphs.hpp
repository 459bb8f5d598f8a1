// Graphs whose results check where they were computed: the structure of each
// file in tests/data/graphs with a task body that mixes its key's position and
// its inputs into a uint64_t, so a result delivered to the wrong task, or a lost
// one, changes every value downstream. Shared by the runs across thread ranks
// (tests/across/get_test.cpp) and across MPI ranks (tests/mpi/get_test.cpp).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "tessera/graph/graph.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/keys.hpp"

namespace tessera::testing {

inline uint64_t mix_in(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ULL + (h << 6) + (h >> 2);
  return h * 0xff51afd7ed558ccdULL;
}

//! The graph files of tests/data/graphs, sorted.
inline std::vector<std::filesystem::path> corpus_files() {
  const char* root = std::getenv("TESSERA_SOURCE_ROOT");
  std::vector<std::filesystem::path> files;
  if (root == nullptr) return files;
  for (const auto& e : std::filesystem::directory_iterator(std::filesystem::path(root) / "tests/data/graphs")) {
    if (e.path().extension() == ".json") files.push_back(e.path());
  }
  std::sort(files.begin(), files.end());
  return files;
}

//! `graph`'s structure with every literal a uint64_t (its node id) and every
//! task a mix of its node id and its inputs, in argument order; each key is
//! `rename(key)` (by default itself).
inline Graph checked_graph(const Graph& graph, const std::function<Key(const Key&)>& rename = nullptr) {
  auto name = [&](const Key& k) { return rename ? rename(k) : k; };
  Graph g;
  g.reserve(graph.size());
  for (uint32_t i = 0; i < graph.size(); ++i) {
    const Key key = name(graph.key(i));
    const Node& node = graph.node(i);
    if (node.is_alias()) {
      g.alias(key, name(node.target()));
    } else if (node.is_literal()) {
      g.put(key, Value(uint64_t{i}));
    } else {
      std::vector<Arg> args;
      for (const Key& d : graph.dependencies(i)) args.emplace_back(ref(name(d)));
      auto mix = [i](std::span<const Value> in) -> Value {
        uint64_t h = i;
        for (const Value& v : in) h = mix_in(h, v.as<uint64_t>());
        return Value(h);
      };
      g.put(key, Task::from_args(fn("mix", mix), std::move(args)));
    }
  }
  return g;
}

//! The uint64_t values of a Result, depth first; an empty Value counts as 0.
inline void checked_values(const Result& r, std::vector<uint64_t>& out) {
  if (!r.is_list()) {
    out.push_back(r.value().has_value() ? r.value().as<uint64_t>() : 0);
    return;
  }
  for (const Result& item : r.items()) checked_values(item, out);
}

//! checked_values as a new vector.
inline std::vector<uint64_t> checked_values(const Result& r) {
  std::vector<uint64_t> out;
  checked_values(r, out);
  return out;
}

//! Calls `check(name, graph, keys, expected)` for each corpus file: its name
//! (the file's stem), its checked_graph, its outputs and their values by
//! get_sync, within a doctest CAPTURE of the name.
template <class F>
void for_each_checked_graph(F&& check) {
  const auto files = corpus_files();
  REQUIRE(files.size() >= 8);
  for (const auto& path : files) {
    CAPTURE(path.filename().string());
    const GraphFile f = load_graph_file(path.string(), ResultMemory::counted);
    const Graph g = checked_graph(f.graph);
    const Keys keys(f.outputs);
    check(path.stem().string(), g, keys, checked_values(get_sync(g, keys)));
  }
}

//! An all-to-all step over `blocks` (a multiple of 4) blocks of `elems`
//! doubles: ("x", i) is made from i, ("y", i) = x(i) + x(i + b/4) + x(i + b/2) +
//! x(i + 3b/4) element by element (on 2 or 4 ranks, x blocks of every rank), and
//! ("z", i) the sum of y(i), the requested keys. One task's need: y's, five
//! blocks (four inputs, its result).
//!   x0 .. x(b-1)  --all to all-->  y0 .. y(b-1)  -->  z0 .. z(b-1)
inline Graph all_to_all_graph(int64_t blocks, size_t elems, std::vector<Key>& request) {
  Graph g;
  for (int64_t i = 0; i < blocks; ++i) {
    g.task(Key("x", {i}), [i, elems] {
      std::vector<double> v(elems);
      for (size_t k = 0; k < elems; ++k) v[k] = static_cast<double>(static_cast<int64_t>(k) * 7 + i * 13 % 101) / 3.0;
      return v;
    });
  }
  const int64_t q = blocks / 4;
  for (int64_t i = 0; i < blocks; ++i) {
    auto add = [](const std::vector<double>& a, const std::vector<double>& b, const std::vector<double>& c,
                  const std::vector<double>& d) {
      std::vector<double> y(a.size());
      for (size_t k = 0; k < y.size(); ++k) y[k] = ((a[k] + b[k]) * 0.5 + c[k]) - d[k] / 3.0;
      return y;
    };
    g.task(Key("y", {i}), add, ref(Key("x", {i})), ref(Key("x", {(i + q) % blocks})),
           ref(Key("x", {(i + 2 * q) % blocks})), ref(Key("x", {(i + 3 * q) % blocks})));
    g.task(Key("z", {i}), [](const std::vector<double>& y) {
      double s = 0;
      for (double v : y) s += v;
      return s;
    }, ref(Key("y", {i})));
    request.push_back(Key("z", {i}));
  }
  return g;
}

//! One block per rank on `n` ranks; rank 1's ("x", 1) is a vector of 1 MiB
//! (1048600 bytes with its header), the others' one double; ("s", i) is the
//! first element of x(i), and each requested ("y", i) reads s(i) and s(1), so
//! that only rank 1 ever holds the large block.
//!   x0 -> s0 (rank 0)   x1 (1 MiB) -> s1 (rank 1)   ...   y(i) = s(i) + s1
inline Graph big_block_on_rank_1_graph(int64_t n, std::vector<Keys>& request) {
  Graph g;
  for (int64_t i = 0; i < n; ++i) {
    g.task(Key("x", {i}), [i] { return std::vector<double>(i == 1 ? 131072 : 1, 1.0); });
    g.task(Key("s", {i}), [](const std::vector<double>& x) { return x[0]; }, ref(Key("x", {i})));
    g.task(Key("y", {i}), [](double a, double b) { return a + b; }, ref(Key("s", {i})), ref(Key("s", {1})));
    request.emplace_back(Key("y", {i}));
  }
  return g;
}

}  // namespace tessera::testing
