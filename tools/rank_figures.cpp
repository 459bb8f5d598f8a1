// Gathering a run's figures and traces from every rank to rank 0 (rank_figures.hpp).
#include "rank_figures.hpp"

#include <array>
#include <cstdint>
#include <vector>

#include "tessera/graph/error.hpp"

namespace tessera::tool {

size_t tasks_computed(const RunStats& stats) {
  return stats.tasks >= stats.messages_received ? stats.tasks - stats.messages_received : 0;
}

void print_rank_figures(Communicator& comm, const RunStats& stats, std::FILE* out) {
  // One allgather per figure (a handful of integers per rank); the wait in microseconds.
  const std::array<int64_t, 7> mine = {
      static_cast<int64_t>(tasks_computed(stats)),          static_cast<int64_t>(stats.messages_sent),
      static_cast<int64_t>(stats.bytes_sent),               static_cast<int64_t>(stats.messages_received),
      static_cast<int64_t>(stats.bytes_received),           static_cast<int64_t>(stats.network_wait_seconds * 1e6),
      static_cast<int64_t>(stats.peak_held_bytes)};
  std::vector<std::vector<int64_t>> by_figure;
  for (int64_t v : mine) by_figure.push_back(comm.allgather(v));
  if (comm.rank() != 0) return;
  std::fprintf(out, "  %-6s %10s %10s %14s %10s %14s %10s %16s\n", "rank", "tasks", "msgs sent", "bytes sent", "msgs recv",
               "bytes recv", "wait s", "peak bytes held");
  std::array<int64_t, 7> sum{};
  auto row = [out](const std::string& label, const std::array<int64_t, 7>& f) {
    std::fprintf(out, "  %-6s %10lld %10lld %14lld %10lld %14lld %10.3f %16lld\n", label.c_str(),
                 static_cast<long long>(f[0]), static_cast<long long>(f[1]), static_cast<long long>(f[2]),
                 static_cast<long long>(f[3]), static_cast<long long>(f[4]), static_cast<double>(f[5]) / 1e6,
                 static_cast<long long>(f[6]));
  };
  for (int r = 0; r < comm.size(); ++r) {
    std::array<int64_t, 7> f{};
    for (size_t k = 0; k < f.size(); ++k) {
      f[k] = by_figure[k][static_cast<size_t>(r)];
      sum[k] += f[k];
    }
    row(std::to_string(r), f);
  }
  row("sum", sum);
}

void write_trace_across(Communicator& comm, const diagnostics::Profiler& profiler, const std::string& path) {
  const std::vector<std::string> traces = gather_strings(comm, profiler.chrome_trace(), 0);
  if (comm.rank() != 0) return;
  std::vector<std::string> names;
  for (int r = 0; r < comm.size(); ++r) names.push_back("rank " + std::to_string(r));
  diagnostics::write_merged_chrome_trace(path, traces, names);
}

}  // namespace tessera::tool
