#include "run_flow_graph.hpp"

#include <chrono>
#include <deque>
#include <vector>

#include <tbb/flow_graph.h>
#include <tbb/task_arena.h>

namespace tessera::bench {

namespace flow = tbb::flow;

struct FlowGraphRunner::Impl {
  explicit Impl(int threads) : arena(threads) {}
  tbb::task_arena arena;
  std::unique_ptr<flow::graph> graph;
  std::deque<flow::continue_node<flow::continue_msg>> nodes;  // deque: nodes never move
  std::vector<size_t> sources;
};

FlowGraphRunner::FlowGraphRunner(const DagShape& shape, int threads)
    : impl_(std::make_unique<Impl>(threads)) {
  Impl& m = *impl_;
  m.arena.execute([&] {
    m.graph = std::make_unique<flow::graph>();
    auto empty_body = [](const flow::continue_msg&) { return flow::continue_msg(); };
    for (uint32_t i = 0; i < shape.size(); ++i) {
      m.nodes.emplace_back(*m.graph, empty_body);
      if (shape.dependencies(i).empty()) m.sources.push_back(i);
    }
    // A continue_node fires once all its predecessors have, then resets, so the
    // same graph can run again.
    for (uint32_t i = 0; i < shape.size(); ++i) {
      for (uint32_t d : shape.dependencies(i)) flow::make_edge(m.nodes[d], m.nodes[i]);
    }
  });
}

FlowGraphRunner::~FlowGraphRunner() {
  // Nodes refer to the graph: destroy them first, inside the arena they live in.
  impl_->arena.execute([&] {
    impl_->nodes.clear();
    impl_->graph.reset();
  });
}

double FlowGraphRunner::run() {
  Impl& m = *impl_;
  double seconds = 0;
  m.arena.execute([&] {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t s : m.sources) m.nodes[s].try_put(flow::continue_msg());
    m.graph->wait_for_all();
    seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  });
  return seconds;
}

}  // namespace tessera::bench
