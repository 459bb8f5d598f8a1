// `tessera graph ...`: inspect, draw and run tessera-graph/1 files
// (docs/graph-format.md) with tessera's order and schedulers.
#include <algorithm>
#include <new>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <system_error>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "allocators.hpp"
#include "command.hpp"
#include "graph_dot.hpp"
#include "interrupt.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph_file/graph_file.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/optimize/order.hpp"
#include "tessera/diagnostics/profiler.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/diagnostics/report.hpp"
#include "tessera/scheduler/get.hpp"
#include "tessera/scheduler/plan.hpp"

namespace tessera::tool {

namespace {

constexpr std::string_view kUsage =
    "usage:\n"
    "  tessera graph inspect FILE.json [--json]\n"
    "      counts, critical path, memory pressure under tessera's order and get_sync,\n"
    "      beside dask's figures from the file\n"
    "  tessera graph dot FILE.json [--color order|memory]\n"
    "      Graphviz DOT on stdout, labelled by key group and indices, coloured by order's priority\n"
    "      (blue runs first) or by bytes; wide graphs collapse to a node per key group and depth\n"
    "  tessera graph run FILE.json [--workers N] [--profile TRACE.json] [--progress] [--memory-limit BYTES]\n"
    "                   [--report REPORT.html]\n"
    "      runs the file's synthetic tasks with get; prints the wall time and the memory held;\n"
    "      --report writes an HTML report of the run (also when it fails)\n";

//! Loads `path`; a file tessera cannot use becomes an InputError naming it.
GraphFile load(const std::string& path, ResultMemory results = ResultMemory::allocated) {
  try {
    return load_graph_file(path, results);
  } catch (const Error& e) {
    throw InputError(path, e.what());
  } catch (const std::bad_alloc&) {
    throw InputError(path, "cannot load: it needs more memory than this machine gives (std::bad_alloc)");
  } catch (const std::exception& e) {
    // The standard library's messages (basic_filebuf::underflow, vector max_size) name no file.
    throw InputError(path, std::string("cannot load: ") + e.what());
  }
}

//! The number of tasks on the longest dependency chain.
uint32_t critical_path_length(const Graph& g, const CompiledGraph& c) {
  std::vector<uint32_t> depth(c.size(), 1);
  uint32_t longest = 0;
  for (uint32_t i : topological_order(g, c)) {
    for (uint32_t d : c.dependencies(i)) depth[i] = std::max(depth[i], depth[d] + 1);
    longest = std::max(longest, depth[i]);
  }
  return longest;
}

//! tessera's figures for a graph file, and dask's when the file has them.
struct Figures {
  size_t tasks = 0, edges = 0, outputs = 0;
  uint32_t critical_path = 0;
  uint64_t order_max_pressure = 0, sync_max_held = 0, sync_max_held_bytes = 0;
  std::optional<uint64_t> dask_order_max_pressure, dask_sync_max_held, dask_sync_max_held_bytes;
};

//! True when the outputs need every node of the graph.
bool needs_all(const GraphFile& f, const CompiledGraph& c) {
  std::vector<uint32_t> roots;
  for (const Key& k : f.outputs) roots.push_back(*f.graph.index_of(k));
  const CulledIds culled = cull_ids(f.graph, c, roots);
  return culled.nodes.size() + culled.aliases.size() == c.size();
}

// The graph is compiled and ordered once: the figures and the get_sync run
// share both. Only when the outputs need part of the graph does get_sync order
// that part itself, as dask orders a culled graph.
Figures measure(const GraphFile& f) {
  Figures x;
  const CompiledGraph& c = f.compiled;
  x.tasks = f.graph.size();
  x.edges = c.num_edges();
  x.outputs = f.outputs.size();
  x.critical_path = critical_path_length(f.graph, c);
  const std::vector<uint32_t> prio = order(f.graph, c);
  x.order_max_pressure = order_pressure(c, prio);
  RunStats stats;
  GetOptions opts;
  opts.stats = &stats;
  if (needs_all(f, c)) {
    get_sync(Plan(f.graph, c, prio, Keys(f.outputs)), opts);
  } else {
    get_sync(f.graph, Keys(f.outputs), opts);
  }
  x.sync_max_held = stats.peak_held;
  x.sync_max_held_bytes = stats.peak_held_bytes;
  if (f.reference) {
    x.dask_order_max_pressure = f.reference->order_max_pressure;
    x.dask_sync_max_held = f.reference->sync_max_held;
    x.dask_sync_max_held_bytes = f.reference->sync_max_held_bytes;
  }
  return x;
}

nlohmann::json to_json(const std::string& path, const GraphFile& f, const Figures& x) {
  auto opt = [](const std::optional<uint64_t>& v) { return v ? nlohmann::json(*v) : nlohmann::json(); };
  nlohmann::json j = {
      {"file", path},
      {"name", f.name},
      {"tasks", x.tasks},
      {"edges", x.edges},
      {"outputs", x.outputs},
      {"critical_path", x.critical_path},
      {"order_max_pressure", x.order_max_pressure},
      {"sync_max_held", x.sync_max_held},
      {"sync_max_held_bytes", x.sync_max_held_bytes},
      {"dask", nullptr},
  };
  if (f.reference) {
    j["dask"] = {{"tool", f.reference->tool},
                 {"order_max_pressure", opt(x.dask_order_max_pressure)},
                 {"sync_max_held", opt(x.dask_sync_max_held)},
                 {"sync_max_held_bytes", opt(x.dask_sync_max_held_bytes)}};
  }
  return j;
}

void print_figure(const char* label, uint64_t ours, const std::optional<uint64_t>& dask) {
  const std::string theirs = dask ? std::to_string(*dask) : "-";
  std::printf("  %-22s %12llu %12s\n", label, static_cast<unsigned long long>(ours), theirs.c_str());
}

int inspect(Args a) {
  const bool json = a.flag("--json");
  const std::string path = a.positional("FILE.json");
  a.done();
  // Measured with results that only report their sizes: a file may declare any.
  const GraphFile f = load(path, ResultMemory::counted);
  const Figures x = measure(f);
  if (json) {
    std::printf("%s\n", to_json(path, f, x).dump(2).c_str());
    return 0;
  }
  std::printf("%s (%s)\n", f.name.c_str(), path.c_str());
  std::printf("  %-22s %12zu\n  %-22s %12zu\n  %-22s %12zu\n  %-22s %12u tasks\n", "tasks", x.tasks, "edges",
              x.edges, "outputs", x.outputs, "critical path", x.critical_path);
  std::printf("  %-22s %12s %12s\n", "", "tessera", "dask");
  print_figure("order_max_pressure", x.order_max_pressure, x.dask_order_max_pressure);
  print_figure("sync_max_held", x.sync_max_held, x.dask_sync_max_held);
  print_figure("sync_max_held_bytes", x.sync_max_held_bytes, x.dask_sync_max_held_bytes);
  return 0;
}

int dot(Args a) {
  const DotColor color = parse_dot_color(a.option("--color").value_or("order"));
  const std::string path = a.positional("FILE.json");
  a.done();
  write_dot(load(path), color, stdout);
  return 0;
}

//! The command line a report shows: the options that change the run.
std::vector<std::string> run_command_line(const std::string& path, int workers, const std::optional<std::string>& limit) {
  std::vector<std::string> words = {"tessera", "graph", "run", path};
  if (workers > 0) words.insert(words.end(), {"--workers", std::to_string(workers)});
  if (limit) words.insert(words.end(), {"--memory-limit", *limit});
  return words;
}

int run(Args a) {
  const bool progress = a.flag("--progress");
  const std::optional<std::string> profile = a.option("--profile");
  const int workers = static_cast<int>(a.int_option("--workers", 0, 0, 1024));
  const std::optional<std::string> limit = a.option("--memory-limit");
  const std::optional<std::string> report_path = a.option("--report");
  const std::string path = a.positional("FILE.json");
  a.done();
  // Without a budget, the graph goes on a heap of huge pages (see allocators.hpp):
  // the parser's buffers and the graph take up to about 16 bytes per byte of the file.
  std::error_code size_error;
  const uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  if (!limit && !size_error) heap_in_huge_pages(16 * uint64_t{file_bytes});
  const GraphFile f = load(path);

  RunStats stats;
  GetOptions opts;
  opts.num_workers = workers;
  opts.stats = &stats;
  if (limit) {
    opts.memory_limit = static_cast<size_t>(tessera::array::parse_bytes(*limit));
    bound_allocators(static_cast<int64_t>(opts.memory_limit));
  }
  diagnostics::ProgressBar bar;
  diagnostics::Profiler profiler;
  if (progress) opts.callbacks.push_back(bar.callbacks());
  if (profile) opts.callbacks.push_back(profiler.callbacks());
  diagnostics::Report report({.title = f.name + " (tessera graph run)"});
  if (report_path) {
    report.set_command_line(run_command_line(path, workers, limit));
    opts.callbacks.push_back(report.callbacks());
  }
  Interrupts interrupts;  // SIGINT/SIGTERM stop the run: exit 130/143
  opts.cancel = interrupts.token();
  const Plan plan(f.graph, f.compiled, {}, Keys(f.outputs));
  // What the recorded sizes say cannot fit is refused before anything is allocated:
  // by a start hook after the others, so a report shows the refused run and its error.
  if (limit) {
    Callbacks refuse;
    refuse.start = [&](const RunState&) { check_memory_limit(f, plan, opts.memory_limit); };
    opts.callbacks.push_back(std::move(refuse));
  }
  const auto t0 = std::chrono::steady_clock::now();
  try {
    get(plan, opts);
  } catch (const std::exception& e) {
    if (report_path) {
      report.record_error(e);
      report.write_html(*report_path);
    }
    if (dynamic_cast<const Cancelled*>(&e) == nullptr || interrupts.signal() == 0) throw;
    std::fprintf(stderr, "tessera graph run: interrupted by %s after %zu of %zu tasks\n", interrupts.signal_name(),
                 stats.tasks_run, stats.tasks);
    return interrupts.exit_status();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  if (profile) profiler.write_chrome_trace(*profile);
  if (report_path) report.write_html(*report_path);

  std::printf("%s: %zu tasks on %d worker(s) in %.3f ms\n", f.name.c_str(), stats.tasks, stats.num_workers,
              seconds * 1e3);
  std::printf("  results held at most  %zu\n", stats.peak_held);
  std::printf("  peak bytes held       %zu\n", stats.peak_held_bytes);
  if (limit) {
    std::printf("  memory limit          %zu\n", opts.memory_limit);
    std::printf("  bytes spilled         %zu (%zu results, %.3f s)\n", stats.spilled_bytes, stats.spill_count,
                stats.spill_seconds);
    std::printf("  reloads               %zu (%.3f s)\n", stats.reload_count, stats.reload_seconds);
  }
  if (profile) std::printf("  trace                 %s (open in ui.perfetto.dev)\n", profile->c_str());
  if (report_path) std::printf("  report                %s (open in a browser)\n", report_path->c_str());
  return 0;
}

int run_graph(std::vector<std::string> args) {
  Args a(std::move(args));
  const std::string command = a.positional("COMMAND (inspect, dot or run)");
  if (command == "inspect") return inspect(std::move(a));
  if (command == "dot") return dot(std::move(a));
  if (command == "run") return run(std::move(a));
  throw UsageError("unknown command '" + command + "'");
}

}  // namespace

const CommandGroup& graph_group() {
  static const CommandGroup group{"graph", "inspect, draw and run tessera-graph/1 files", kUsage, run_graph};
  return group;
}

}  // namespace tessera::tool
