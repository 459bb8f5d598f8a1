// Gathering a run's figures and traces from every rank to rank 0 (rank_figures.hpp).
#include "rank_figures.hpp"

#include <cstring>
#include <type_traits>

#include "tessera/graph/error.hpp"

namespace tessera::tool {

size_t tasks_computed(const RunStats& stats) {
  return stats.tasks >= stats.messages_received ? stats.tasks - stats.messages_received : 0;
}

std::vector<RunStats> gather_run_stats(Communicator& comm, const RunStats& stats) {
  static_assert(std::is_trivially_copyable_v<RunStats>, "RunStats travels as its bytes");
  const std::string mine(reinterpret_cast<const char*>(&stats), sizeof stats);
  std::vector<RunStats> out;
  for (const std::string& bytes : gather_strings(comm, mine, 0)) {
    if (bytes.size() != sizeof(RunStats)) {
      throw Error("graph run: a rank sent " + std::to_string(bytes.size()) + " bytes of figures, expected " +
                  std::to_string(sizeof(RunStats)) + " (ranks of different tessera builds?)");
    }
    RunStats s;
    std::memcpy(&s, bytes.data(), sizeof s);
    out.push_back(s);
  }
  return out;
}

RunStats sum_run_stats(const std::vector<RunStats>& ranks) {
  RunStats sum;
  for (const RunStats& s : ranks) {
    sum.tasks += tasks_computed(s);
    sum.tasks_run += s.tasks_run;
    sum.peak_held += s.peak_held;
    sum.peak_held_bytes += s.peak_held_bytes;
    sum.num_workers += s.num_workers;
    sum.spilled_bytes += s.spilled_bytes;
    sum.spill_count += s.spill_count;
    sum.reload_count += s.reload_count;
    sum.spill_seconds += s.spill_seconds;
    sum.reload_seconds += s.reload_seconds;
    sum.bytes_sent += s.bytes_sent;
    sum.bytes_received += s.bytes_received;
    sum.messages_sent += s.messages_sent;
    sum.messages_received += s.messages_received;
    sum.network_wait_seconds += s.network_wait_seconds;
  }
  return sum;
}

void print_rank_figures(const std::vector<RunStats>& ranks, std::FILE* out) {
  std::fprintf(out, "  %-6s %10s %10s %14s %10s %14s %10s %16s\n", "rank", "tasks", "msgs sent", "bytes sent",
               "msgs recv", "bytes recv", "wait s", "peak bytes held");
  auto row = [out](const std::string& label, size_t tasks, const RunStats& s) {
    std::fprintf(out, "  %-6s %10zu %10zu %14zu %10zu %14zu %10.3f %16zu\n", label.c_str(), tasks, s.messages_sent,
                 s.bytes_sent, s.messages_received, s.bytes_received, s.network_wait_seconds, s.peak_held_bytes);
  };
  for (size_t r = 0; r < ranks.size(); ++r) row(std::to_string(r), tasks_computed(ranks[r]), ranks[r]);
  const RunStats sum = sum_run_stats(ranks);
  row("sum", sum.tasks, sum);
}

void write_trace_across(Communicator& comm, const diagnostics::Profiler& profiler, const std::string& path) {
  const std::vector<std::string> traces = gather_strings(comm, profiler.chrome_trace(), 0);
  if (comm.rank() != 0) return;
  std::vector<std::string> names;
  for (int r = 0; r < comm.size(); ++r) names.push_back("rank " + std::to_string(r));
  diagnostics::write_merged_chrome_trace(path, traces, names);
}

}  // namespace tessera::tool
