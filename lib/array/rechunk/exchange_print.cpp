// print_exchange_plan (`tessera rechunk --dry-run`, the demo's --dry-run): a
// table a reader can scale by eye. Sizes are printed in binary units with one
// decimal ("1.5 GiB"), counts as integers.
#include "tessera/array/rechunk/exchange.hpp"

#include <algorithm>
#include <string>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

namespace tessera::array {
namespace {

std::string size_text(double bytes) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  int u = 0;
  for (; bytes >= 1024 && u < 5; ++u) bytes /= 1024;
  return u == 0 ? absl::StrFormat("%.0f B", bytes) : absl::StrFormat("%.1f %s", bytes, units[u]);
}

void print_round(std::FILE* out, const std::string& label, const ExchangeRound& r) {
  const int64_t messages = r.max_messages();
  const double per_message =
      messages > 0 ? static_cast<double>(r.bytes) / static_cast<double>(messages + std::min(r.senders, r.receivers))
                   : static_cast<double>(r.bytes);
  std::fprintf(out, "%-8s %10lld %11s %8d %9d %12lld %13s %11s %11s %11s\n", label.c_str(),
               static_cast<long long>(r.output_blocks), size_text(static_cast<double>(r.bytes)).c_str(), r.senders,
               r.receivers, static_cast<long long>(messages), size_text(per_message).c_str(),
               size_text(static_cast<double>(r.max_send)).c_str(), size_text(static_cast<double>(r.max_recv)).c_str(),
               size_text(static_cast<double>(r.max_peak)).c_str());
}

}  // namespace

void print_exchange_plan(std::FILE* out, const Chunks& from, const Chunks& to, DType dtype,
                         const ExchangeOptions& options, const ExchangePlan& plan, size_t max_rounds) {
  std::fprintf(out, "rechunk across %d ranks (%d worker%s each, planned under %s per rank): %s %s, %s\n", plan.ranks,
               options.workers, options.workers == 1 ? "" : "s",
               size_text(static_cast<double>(options.max_mem)).c_str(), shape_str(from.shape()).c_str(),
               dtype.name().c_str(), size_text(static_cast<double>(plan.total_bytes)).c_str());
  std::fprintf(out, "  input blocks  %lld of %s (%s), %lld per rank at most\n",
               static_cast<long long>(plan.input_blocks), shape_str(from.max_block_shape()).c_str(),
               size_text(static_cast<double>(plan.input_block_bytes)).c_str(),
               static_cast<long long>((plan.input_blocks + plan.ranks - 1) / plan.ranks));
  std::fprintf(out, "  output blocks %lld of %s (%s), %lld per rank at most\n",
               static_cast<long long>(plan.output_blocks), shape_str(to.max_block_shape()).c_str(),
               size_text(static_cast<double>(plan.output_block_bytes)).c_str(),
               static_cast<long long>((plan.output_blocks + plan.ranks - 1) / plan.ranks));
  std::fprintf(out, "  rounds %zu (one all-to-all-v each); messages are between distinct ranks, an upper bound\n",
               plan.rounds.size());
  std::fprintf(out, "%-8s %10s %11s %8s %9s %12s %13s %11s %11s %11s\n", "round", "out-blocks", "bytes", "senders",
               "receivers", "messages<=", "bytes/message", "send/rank", "recv/rank", "peak/rank");
  for (size_t k = 0; k < plan.rounds.size() && k < max_rounds; ++k) print_round(out, std::to_string(k), plan.rounds[k]);
  if (plan.rounds.size() > max_rounds) {
    std::fprintf(out, "... %zu more rounds\n", plan.rounds.size() - max_rounds);
  }
  int64_t messages = 0, bytes = 0, sent = 0, received = 0;
  for (const auto& r : plan.rounds) {
    messages += r.max_messages();
    bytes += r.bytes;
    sent += r.max_send;
    received += r.max_recv;
  }
  std::fprintf(out, "total: %zu rounds, %s exchanged, at most %lld messages; peak memory per rank %s\n",
               plan.rounds.size(), size_text(static_cast<double>(bytes)).c_str(), static_cast<long long>(messages),
               size_text(static_cast<double>(plan.peak_memory)).c_str());
  // A rank's share of a round is at most the round's largest (its own part to itself included).
  std::fprintf(out, "per rank: at most %s sent and %s received over the rounds\n",
               size_text(static_cast<double>(sent)).c_str(), size_text(static_cast<double>(received)).c_str());
}

}  // namespace tessera::array
