// bench_overhead — per-task scheduling overhead of tessera's `get` beside oneTBB
// flow_graph (the floor) and dask.threaded.get, on the same three DAGs.
//
//   scripts/bench overhead          (or: build/bench/bench_overhead --peer-script bench/peers/overhead_dask.py)
//   --only tree_sum|chains|stencil  measures that DAG alone
//
// Prints one markdown table of µs per task (best of --repeat runs) and the
// ratios against its per-task targets. tessera is measured run only (a built
// graph handed to `get`) and end to end (build + cull + order + get). The run-only
// figure is also taken with a memory limit that is never reached (1 TiB, or
// `--memory-limit BYTES`), interleaved with the unlimited runs of the same Plan so
// that both see the same load: their ratio is what the budget's bookkeeping costs.
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <map>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "dags.hpp"
#include "run_flow_graph.hpp"
#include "run_tessera.hpp"

namespace tb = tessera::bench;

namespace {

struct Options {
  std::string python = "/usr/bin/python3";
  std::string peer_script;  // empty: no dask column
  int repeat = 5;
  int dask_repeat = 2;
  double scale = 1.0;  // < 1 shrinks the DAGs (a quick smoke run)
  size_t memory_limit = size_t{1} << 40;  // of the "limit set, never reached" runs
  std::string only;  // empty: all three DAGs; else the one of that name
};

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) throw std::invalid_argument(a + " needs a value");
      return argv[++i];
    };
    if (a == "--python") o.python = value();
    else if (a == "--peer-script") o.peer_script = value();
    else if (a == "--repeat") o.repeat = std::stoi(value());
    else if (a == "--dask-repeat") o.dask_repeat = std::stoi(value());
    else if (a == "--scale") o.scale = std::stod(value());
    else if (a == "--memory-limit") o.memory_limit = std::stoull(value());
    else if (a == "--only") o.only = value();
    else throw std::invalid_argument("unknown option " + a);
  }
  return o;
}

template <class F>
double best_of(int repeat, F&& f) {
  double best = 1e300;
  for (int r = 0; r < repeat; ++r) best = std::min(best, f());
  return best;
}

// One measured figure per (row, DAG), in seconds for the whole DAG.
using Figures = std::map<std::string, std::map<std::string, double>>;

// Runs the dask peer on the graph files; returns its JSON lines by DAG name.
std::map<std::string, nlohmann::json> run_dask(const Options& o, const std::vector<std::string>& files) {
  std::string cmd = o.python + " " + o.peer_script + " --workers 2 --repeat " + std::to_string(o.dask_repeat);
  for (const auto& f : files) cmd += " " + f;
  FILE* p = popen(cmd.c_str(), "r");
  if (p == nullptr) throw std::runtime_error("cannot run " + cmd);
  std::map<std::string, nlohmann::json> out;
  char line[4096];
  while (std::fgets(line, sizeof line, p) != nullptr) {
    auto j = nlohmann::json::parse(line);
    out[j["name"].get<std::string>()] = j;
  }
  if (pclose(p) != 0) throw std::runtime_error("the dask peer failed: " + cmd);
  return out;
}

void print_row(const std::string& label, const std::vector<double>& cells, int precision) {
  std::printf("| %-44s |", label.c_str());
  for (double c : cells) std::printf(" %9.*f |", precision, c);
  std::printf("\n");
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  auto scaled = [&](uint32_t n) { return std::max<uint32_t>(2, static_cast<uint32_t>(n * o.scale)); };
  std::vector<tb::DagShape> all;
  all.push_back(tb::tree_sum_shape(scaled(100000)));
  all.push_back(tb::chains_shape(scaled(1000), 100));
  all.push_back(tb::stencil_shape(scaled(300), 300));
  // --only moves one DAG out and keeps the others alive, so that the one measured
  // runs on the heap a full run gives it.
  std::vector<tb::DagShape> shapes;
  for (auto& sh : all) {
    if (o.only.empty() || sh.name == o.only) shapes.push_back(std::move(sh));
  }
  if (shapes.empty()) throw std::invalid_argument("--only takes tree_sum, chains or stencil, not " + o.only);

  const auto dir = std::filesystem::temp_directory_path() / ("tessera-overhead-" + std::to_string(getpid()));
  std::filesystem::create_directories(dir);
  std::vector<std::string> files;
  Figures s;  // seconds
  std::map<std::string, int64_t> checksums;
  for (const auto& shape : shapes) {
    const std::string& n = shape.name;
    std::fprintf(stderr, "overhead: %s (%u tasks)\n", n.c_str(), shape.size());
    for (int w : {1, 2}) {
      tb::TesseraRunner runner(shape, w);
      double& plain = s["run" + std::to_string(w)][n];
      double& limited = s["limit" + std::to_string(w)][n];
      double& plain_cpu = s["run_cpu" + std::to_string(w)][n];
      double& limited_cpu = s["limit_cpu" + std::to_string(w)][n];
      plain = limited = plain_cpu = limited_cpu = 1e300;
      auto measure = [&](size_t limit, double& wall, double& cpu) {
        wall = std::min(wall, runner.run(limit));
        cpu = std::min(cpu, runner.run_cpu_seconds());
      };
      for (int r = 0; r < o.repeat; ++r) {
        // Alternating which goes first, so that neither always runs on the other's warm caches.
        if (r % 2 == 0) measure(0, plain, plain_cpu);
        measure(o.memory_limit, limited, limited_cpu);
        if (r % 2 == 1) measure(0, plain, plain_cpu);
      }
      double& e2e = s["e2e" + std::to_string(w)][n];
      e2e = 1e300;
      for (int r = 0; r < o.repeat; ++r) {
        const double t = runner.end_to_end();
        if (t >= e2e) continue;
        e2e = t;
        s["build" + std::to_string(w)][n] = runner.build_seconds();  // the split of the best run
        s["plan" + std::to_string(w)][n] = runner.plan_seconds();
        s["build_cpu" + std::to_string(w)][n] = runner.build_cpu_seconds();
        s["plan_cpu" + std::to_string(w)][n] = runner.plan_cpu_seconds();
        s["e2e_cpu" + std::to_string(w)][n] = runner.end_to_end_cpu_seconds();
      }
      checksums[n] = runner.checksum();
      tb::FlowGraphRunner flow(shape, w);
      s["flow" + std::to_string(w)][n] = best_of(o.repeat, [&] { return flow.run(); });
    }
    files.push_back((dir / (n + ".json")).string());
    tb::write_graph_file(shape, files.back());
  }
  std::map<std::string, nlohmann::json> dask;
  if (!o.peer_script.empty()) {
    std::fprintf(stderr, "overhead: dask.threaded.get (%s)\n", o.peer_script.c_str());
    dask = run_dask(o, files);
    for (const auto& shape : shapes) {
      const auto& j = dask.at(shape.name);
      if (j["checksum"].get<int64_t>() != checksums[shape.name]) {
        throw std::runtime_error("dask and tessera disagree on " + shape.name + ": " +
                                 std::to_string(j["checksum"].get<int64_t>()) + " vs " +
                                 std::to_string(checksums[shape.name]));
      }
      s["dask_run"][shape.name] = j["run_s"].get<double>();
      s["dask_e2e"][shape.name] = j["e2e_s"].get<double>();
    }
  }
  std::filesystem::remove_all(dir);

  auto per_task = [&](const std::string& row) {
    std::vector<double> cells;
    for (const auto& shape : shapes) cells.push_back(s[row][shape.name] * 1e6 / shape.size());
    return cells;
  };
  auto ratio = [&](const std::string& a, const std::string& b) {
    std::vector<double> cells;
    for (const auto& shape : shapes) cells.push_back(s[a][shape.name] / s[b][shape.name]);
    return cells;
  };
  std::printf("\n| µs per task (best of %d; dask best of %d)    |", o.repeat, o.dask_repeat);
  for (const auto& shape : shapes) std::printf(" %9s |", shape.name.c_str());
  std::printf("\n|%s|", std::string(46, '-').c_str());
  for (size_t i = 0; i < shapes.size(); ++i) std::printf("%s|", std::string(11, '-').c_str());
  std::printf("\n");
  print_row("tasks", [&] { std::vector<double> c; for (auto& sh : shapes) c.push_back(sh.size()); return c; }(), 0);
  print_row("tessera get, run only, 1 worker", per_task("run1"), 3);
  print_row("tessera get, run only, 2 workers", per_task("run2"), 3);
  print_row("tessera run only, limit never reached, 1w", per_task("limit1"), 3);
  print_row("tessera run only, limit never reached, 2w", per_task("limit2"), 3);
  print_row("limit set / unset, run only, 1w (<= 1.03)", ratio("limit1", "run1"), 3);
  print_row("limit set / unset, run only, 2w (<= 1.03)", ratio("limit2", "run2"), 3);
  print_row("limit set / unset, run only CPU time, 1w", ratio("limit_cpu1", "run_cpu1"), 3);
  print_row("tessera end to end, 1 worker", per_task("e2e1"), 3);
  print_row("tessera end to end, 2 workers", per_task("e2e2"), 3);
  print_row("  of which: build the Graph", per_task("build2"), 3);
  print_row("  of which: Plan (cull + order)", per_task("plan2"), 3);
  print_row("tessera end to end, 2 workers, CPU time", per_task("e2e_cpu2"), 3);
  print_row("  of which: build the Graph, CPU time", per_task("build_cpu2"), 3);
  print_row("  of which: Plan (cull + order), CPU time", per_task("plan_cpu2"), 3);
  print_row("oneTBB flow_graph, empty bodies, 1 thread", per_task("flow1"), 3);
  print_row("oneTBB flow_graph, empty bodies, 2 threads", per_task("flow2"), 3);
  if (!dask.empty()) {
    print_row("dask.threaded.get, run, 2 workers", per_task("dask_run"), 3);
    print_row("dask end to end, 2 workers", per_task("dask_e2e"), 3);
    print_row("dask run / tessera run, 2w (target >= 40)", ratio("dask_run", "run2"), 1);
    print_row("dask e2e / tessera e2e, 2w (target >= 20)", ratio("dask_e2e", "e2e2"), 1);
  }
  print_row("tessera run / flow_graph, 2w (target <= 3)", ratio("run2", "flow2"), 2);
  std::printf("\ntessera run only at 2 workers on %s: %.3f µs per task (target <= 1)\n",
              shapes[0].name.c_str(), per_task("run2")[0]);
  std::printf("tessera end to end at 2 workers, wall: %.3f / %.3f / %.3f µs per task (target <= 0.6)\n",
              per_task("e2e2")[0], per_task("e2e2")[1], per_task("e2e2")[2]);
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_overhead: %s\n", e.what());
  return 1;
}
