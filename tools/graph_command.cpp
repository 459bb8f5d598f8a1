// `tessera graph ...`: inspect, draw and run tessera-graph/1 files
// (docs/graph-format.md) with tessera's order and schedulers.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <exception>
#include <filesystem>
#include <memory>
#include <new>
#include <optional>
#include <span>
#include <string>
#include <system_error>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "allocators.hpp"
#include "cli.hpp"
#include "command.hpp"
#include "graph_dot.hpp"
#include "interrupt.hpp"
#include "rank_figures.hpp"
#include "ranks.hpp"
#include "terminal.hpp"
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

//! The options of `graph inspect`.
struct InspectOptions {
  std::string path;
  bool json = false;
};

int inspect(const InspectOptions& o) {
  const std::string& path = o.path;
  // Measured with results that only report their sizes: a file may declare any.
  const GraphFile f = load(path, ResultMemory::counted);
  const Figures x = measure(f);
  if (o.json) {
    std::printf("%s\n", to_json(path, f, x).dump(2).c_str());
    return 0;
  }
  std::printf("%s (%s)\n", printable(f.name).c_str(), printable(path).c_str());
  std::printf("  %-22s %12zu\n  %-22s %12zu\n  %-22s %12zu\n  %-22s %12u tasks\n", "tasks", x.tasks, "edges",
              x.edges, "outputs", x.outputs, "critical path", x.critical_path);
  std::printf("  %-22s %12s %12s\n", "", "tessera", "dask");
  print_figure("order_max_pressure", x.order_max_pressure, x.dask_order_max_pressure);
  print_figure("sync_max_held", x.sync_max_held, x.dask_sync_max_held);
  print_figure("sync_max_held_bytes", x.sync_max_held_bytes, x.dask_sync_max_held_bytes);
  return 0;
}

//! The options of `graph dot`.
struct DotOptions {
  std::string path;
  std::string color = "order";
};

int dot(const DotOptions& o) {
  const DotColor color = parse_dot_color(o.color);
  write_dot(load(o.path), color, stdout);
  return 0;
}

//! The options of `graph run`.
struct RunOptions {
  std::string path;
  int workers = 0;
  std::optional<std::string> profile, limit, report;
  bool progress = false, mpi = false;
  std::vector<std::string> command_line;  // as the report shows it
};

//! The requested results as they came back: how many, and their bytes
//! (the recorded nbytes of each output, when every one arrived).
std::pair<size_t, size_t> outputs_held(const Result& r) {
  size_t bytes = 0;
  for (const Result& item : r.items()) bytes += item.value().nbytes();
  return {r.size(), bytes};
}

// Under mpirun (or --mpi) every rank loads the file and checks the limit, the
// ranks agree on errors, then run the Plan across the ranks (get with the
// communicator: tessera::mpi::get's run); rank 0 prints and writes the trace.
int run(const RunOptions& o) {
  const std::string& path = o.path;
  const std::optional<std::string>& profile = o.profile;
  const std::optional<std::string>& limit = o.limit;
  const std::optional<std::string>& report_path = o.report;
  std::shared_ptr<Communicator> comm;
  if (o.mpi || launched_by_mpirun()) {
    if (report_path) {
      throw UsageError("--report draws a run on one process; it cannot be used under mpirun or with --mpi "
                       "(--profile writes one trace with a process per rank)");
    }
    comm = start_mpi();
    agree_on_options(*comm, "--workers " + std::to_string(o.workers) + " --memory-limit " + limit.value_or("none"));
  }
  if (report_path) check_report_path(*report_path);
  const bool leader = comm == nullptr || comm->rank() == 0;
  // Without a budget, the graph goes on a heap of huge pages (see allocators.hpp):
  // the parser's buffers and the graph take up to about 16 bytes per byte of the file.
  std::error_code size_error;
  const uintmax_t file_bytes = std::filesystem::file_size(path, size_error);
  if (!limit && !size_error) heap_in_huge_pages(16 * uint64_t{file_bytes});

  RunStats stats;
  GetOptions opts;
  opts.num_workers = comm && o.workers == 0 ? workers_per_rank(comm->size()) : o.workers;
  opts.stats = &stats;
  opts.communicator = comm;
  if (limit) {
    opts.memory_limit = static_cast<size_t>(tessera::array::parse_bytes(*limit));
    bound_allocators(static_cast<int64_t>(opts.memory_limit));
  }
  std::optional<GraphFile> loaded;
  std::optional<Plan> planned;
  std::exception_ptr failure;
  try {
    loaded.emplace(load(path));
    planned.emplace(loaded->graph, loaded->compiled, std::span<const uint32_t>{}, Keys(loaded->outputs));
    // Across ranks, what cannot fit one rank's limit is refused before the run, on every rank.
    if (limit && comm) check_memory_limit(*loaded, *planned, opts.memory_limit);
  } catch (...) {
    if (!comm) throw;
    failure = std::current_exception();
  }
  if (comm) agree(*comm, failure);
  const GraphFile& f = *loaded;
  const Plan& plan = *planned;

  diagnostics::ProgressBar bar;
  if (o.progress && leader) opts.callbacks.push_back(bar.callbacks());
  diagnostics::Report report({.title = f.name + " (tessera graph run)"});
  if (report_path) {
    report.set_command_line(o.command_line);
    opts.callbacks.push_back(report.callbacks());
  }
  Interrupts interrupts;  // SIGINT/SIGTERM stop the run: exit 130/143
  opts.cancel = interrupts.token();
  // What the recorded sizes say cannot fit is refused before anything is allocated:
  // by a start hook after the others, so a report shows the refused run and its error.
  if (limit && !comm) {
    Callbacks refuse;
    refuse.start = [&](const RunState&) { check_memory_limit(f, plan, opts.memory_limit); };
    opts.callbacks.push_back(std::move(refuse));
  }
  // The ranks' traces count from one moment: their Profilers are made after a barrier.
  if (comm) barrier(*comm);
  diagnostics::Profiler profiler;
  if (profile) opts.callbacks.push_back(profiler.callbacks());
  const auto t0 = std::chrono::steady_clock::now();
  std::optional<Result> result;
  try {
    result = get(plan, opts);
  } catch (const std::exception& e) {
    if (report_path) {
      report.record_error(e);
      write_report(report, *report_path, "tessera graph run");
    }
    if (dynamic_cast<const Cancelled*>(&e) == nullptr || interrupts.signal() == 0) throw;
    std::fprintf(stderr, "tessera graph run: interrupted by %s after %zu of %zu tasks\n", interrupts.signal_name(),
                 stats.tasks_run, stats.tasks);
    return interrupts.exit_status();
  }
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  // Across ranks, every rank's figures and trace go to rank 0, which prints and
  // writes them after the last collective (a failed write then strands no rank).
  const std::vector<RunStats> ranks = comm ? gather_run_stats(*comm, stats) : std::vector<RunStats>{};
  if (profile) {
    if (comm) {
      write_trace_across(*comm, profiler, *profile);
    } else {
      profiler.write_chrome_trace(*profile);
    }
  }
  const bool reported = report_path && write_report(report, *report_path, "tessera graph run");
  if (!leader) return 0;
  const auto [outputs, output_bytes] = outputs_held(*result);
  const RunStats all = comm ? sum_run_stats(ranks) : stats;
  if (comm) {
    std::printf("%s: %zu tasks on %d ranks x %d worker(s) in %.3f ms\n", printable(f.name).c_str(), all.tasks,
                comm->size(), stats.num_workers, seconds * 1e3);
    print_rank_figures(ranks, stdout);
  } else {
    std::printf("%s: %zu tasks on %d worker(s) in %.3f ms\n", printable(f.name).c_str(), stats.tasks, stats.num_workers,
                seconds * 1e3);
  }
  std::printf("  outputs               %zu (%zu bytes)\n", outputs, output_bytes);
  if (!comm) {
    std::printf("  results held at most  %zu\n", stats.peak_held);
    std::printf("  peak bytes held       %zu\n", stats.peak_held_bytes);
  }
  if (limit) {
    const char* where = comm ? ", all ranks" : "";
    std::printf("  memory limit          %zu%s\n", opts.memory_limit, comm ? " (each rank)" : "");
    std::printf("  bytes spilled         %zu (%zu results, %.3f s%s)\n", all.spilled_bytes, all.spill_count,
                all.spill_seconds, where);
    std::printf("  reloads               %zu (%.3f s%s)\n", all.reload_count, all.reload_seconds, where);
  }
  if (profile) {
    std::printf("  trace                 %s (open in ui.perfetto.dev%s)\n", profile->c_str(),
                comm ? "; a process per rank" : "");
  }
  if (reported) std::printf("  report                %s (open in a browser)\n", report_path->c_str());
  return 0;
}

void define_graph(CLI::App& graph, Action& action) {
  graph.require_subcommand(0, 1);
  const auto file = [](CLI::App& c, std::string& path) {
    c.add_option("FILE.json", path, "a tessera-graph/1 file (docs/graph-format.md)")->required();
  };

  auto in = std::make_shared<InspectOptions>();
  CLI::App& inspect_command = add_command(
      graph, action, "inspect",
      "counts, critical path, memory pressure under tessera's order and get_sync, beside dask's figures from the file",
      [in] { return inspect(*in); });
  file(inspect_command, in->path);
  inspect_command.add_flag("--json", in->json, "print the figures as JSON");

  auto d = std::make_shared<DotOptions>();
  CLI::App& dot_command = add_command(graph, action, "dot",
                                      "Graphviz DOT on stdout, labelled by key group and indices, coloured by order's "
                                      "priority (blue runs first) or by bytes; wide graphs collapse to a node per key "
                                      "group and depth",
                                      [d] { return dot(*d); });
  file(dot_command, d->path);
  dot_command.add_option("--color", d->color, "what the fill colour shows: order (default) or memory")
      ->type_name("order|memory");

  auto r = std::make_shared<RunOptions>();
  CLI::App& run_command = *graph.add_subcommand(
      "run", "runs the file's synthetic tasks with get; prints the wall time and the memory held");
  run_command.footer(
      "Across ranks: under mpirun (more than one rank) or with --mpi, every rank loads FILE and the graph runs "
      "across the ranks (tessera::mpi::get; docs/mpi-graphs.md). Rank 0 prints the run and a row per rank (tasks "
      "it ran, results it sent and received: messages and bytes, seconds waiting on the network, peak bytes held) "
      "with their sum, and writes --profile; a failed task's error names the rank it failed on, with the exit "
      "status of one process.");
  set_action(run_command, action, [r, &run_command] {
    r->command_line = command_line(run_command);
    return run(*r);
  });
  file(run_command, r->path);
  run_command.add_option("--workers", r->workers, "threads (0: the hardware's; across ranks, shared among them)")
      ->check(CLI::Range(0, 1024));
  run_command
      .add_option("--profile", r->profile,
                  "write a Chrome trace of the run (open in ui.perfetto.dev); across ranks, rank 0 writes one "
                  "trace with a process per rank (\"rank N\")")
      ->type_name("TRACE.json");
  run_command.add_flag("--progress", r->progress, "draw a progress bar on stderr (across ranks: rank 0's tasks)");
  run_command
      .add_option("--memory-limit", r->limit,
                  "bytes held at most (across ranks: by each rank); results beyond it spill to disk")
      ->check(size_check());
  run_command
      .add_option("--report", r->report, "write an HTML report of the run (also when it fails); one process only")
      ->type_name("REPORT.html");
  run_command.add_flag("--mpi", r->mpi,
                       "run across the ranks of an mpirun job (the default when started by mpirun with more than "
                       "one rank)");
}

}  // namespace

const CommandGroup& graph_group() {
  static const CommandGroup group{"graph", "inspect, draw and run tessera-graph/1 files", define_graph};
  return group;
}

}  // namespace tessera::tool
