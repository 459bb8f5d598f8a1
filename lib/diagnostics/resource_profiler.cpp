#include "tessera/diagnostics/resource_profiler.hpp"

#include <algorithm>
#include <ctime>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>

#include "storage/pages.hpp"
#include "ticker.hpp"
#include "write_file.hpp"

namespace tessera::diagnostics {
namespace {

double process_cpu_seconds() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

}  // namespace

size_t resident_bytes() { return tessera::detail::resident_memory().resident; }

ResourceProfiler::ResourceProfiler(std::chrono::duration<double> dt)
    : dt_(dt), origin_(std::chrono::steady_clock::now()), ticker_(std::make_unique<detail::Ticker>()) {}

ResourceProfiler::~ResourceProfiler() = default;

Callbacks ResourceProfiler::callbacks() {
  Callbacks cb;
  cb.start = [this](const RunState& state) {
    last_wall_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
    last_cpu_ = process_cpu_seconds();
    {
      std::lock_guard lk(m_);
      memory_limit_ = state.memory_limit();
    }
    sample(state);
    ticker_->start(dt_, [this, &state] { sample(state); });
  };
  cb.finish = [this](const RunState& state, bool) {
    ticker_->stop();
    sample(state);
  };
  return cb;
}

// Runs on the ticker's thread, or in a hook while the ticker is stopped.
void ResourceProfiler::sample(const RunState& state) {
  const double wall = std::chrono::duration<double>(std::chrono::steady_clock::now() - origin_).count();
  const double cpu = process_cpu_seconds();
  const double cpu_percent = wall > last_wall_ ? 100.0 * (cpu - last_cpu_) / (wall - last_wall_) : 0.0;
  last_wall_ = wall;
  last_cpu_ = cpu;
  ResourceSample s{wall, resident_bytes(), cpu_percent, state.held_bytes(), state.held_count()};
  std::lock_guard lk(m_);
  samples_.push_back(s);
}

std::vector<ResourceSample> ResourceProfiler::results() const {
  std::lock_guard lk(m_);
  return samples_;
}

void ResourceProfiler::clear() {
  std::lock_guard lk(m_);
  samples_.clear();
}

std::string ResourceProfiler::csv() const {
  std::string out = "time_s,rss_bytes,cpu_percent,held_bytes,held_count\n";
  for (const ResourceSample& s : results()) {
    absl::StrAppendFormat(&out, "%.6f,%d,%.1f,%d,%d\n", s.time, s.rss_bytes, s.cpu_percent, s.held_bytes,
                          s.held_count);
  }
  return out;
}

std::string ResourceProfiler::svg() const {
  const std::vector<ResourceSample> samples = results();
  size_t limit = 0;
  {
    std::lock_guard lk(m_);
    limit = memory_limit_;
  }
  constexpr double W = 800, H = 400, left = 90, right = 20, top = 40, bottom = 50;
  double t0 = samples.empty() ? 0 : samples.front().time, t1 = samples.empty() ? 1 : samples.back().time;
  if (t1 <= t0) t1 = t0 + 1e-3;
  double ymax = static_cast<double>(std::max<size_t>(limit, 1));
  for (const ResourceSample& s : samples) ymax = std::max({ymax, double(s.rss_bytes), double(s.held_bytes)});
  auto x = [&](double t) { return left + (t - t0) / (t1 - t0) * (W - left - right); };
  auto y = [&](double b) { return H - bottom - b / ymax * (H - top - bottom); };
  auto line = [&](auto bytes, const char* colour) {
    std::string pts;
    for (const ResourceSample& s : samples) absl::StrAppendFormat(&pts, "%.1f,%.1f ", x(s.time), y(double(bytes(s))));
    return absl::StrFormat("<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"2\" points=\"%s\"/>\n", colour, pts);
  };
  std::string out = absl::StrFormat(
      "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\">\n"
      "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
      "<text x=\"%.0f\" y=\"24\" font-family=\"sans-serif\" font-size=\"16\">Memory over time</text>\n",
      W, H, W, H, left);
  // Axes, with the extremes labelled.
  absl::StrAppendFormat(&out,
                        "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n"
                        "<line x1=\"%.0f\" y1=\"%.0f\" x2=\"%.0f\" y2=\"%.0f\" stroke=\"black\"/>\n",
                        left, H - bottom, W - right, H - bottom, left, top, left, H - bottom);
  absl::StrAppendFormat(&out,
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\">%.3f s</text>\n"
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\" "
                        "text-anchor=\"end\">%.3f s</text>\n"
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\" "
                        "text-anchor=\"end\">%.1f MiB</text>\n"
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\" "
                        "text-anchor=\"end\">0</text>\n"
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\" "
                        "text-anchor=\"middle\">time since start</text>\n",
                        left, H - bottom + 18, t0, W - right, H - bottom + 18, t1, left - 6, top + 4,
                        ymax / (1 << 20), left - 6, H - bottom, (left + W - right) / 2, H - 12);
  out += line([](const ResourceSample& s) { return s.rss_bytes; }, "#1f77b4");
  out += line([](const ResourceSample& s) { return s.held_bytes; }, "#ff7f0e");
  if (limit > 0) {
    const double yl = y(static_cast<double>(limit));
    absl::StrAppendFormat(&out,
                          "<line x1=\"%.0f\" y1=\"%.1f\" x2=\"%.0f\" y2=\"%.1f\" stroke=\"#d62728\" "
                          "stroke-dasharray=\"6,4\"/>\n"
                          "<text x=\"%.0f\" y=\"%.1f\" font-family=\"sans-serif\" font-size=\"12\" "
                          "fill=\"#d62728\" text-anchor=\"end\">memory limit %.1f MiB</text>\n",
                          left, yl, W - right, yl, W - right, yl - 4, static_cast<double>(limit) / (1 << 20));
  }
  absl::StrAppendFormat(&out,
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\" "
                        "fill=\"#1f77b4\">RSS</text>\n"
                        "<text x=\"%.0f\" y=\"%.0f\" font-family=\"sans-serif\" font-size=\"12\" "
                        "fill=\"#ff7f0e\">bytes held by results</text>\n</svg>\n",
                        W - 260, 24.0, W - 200, 24.0);
  return out;
}

void ResourceProfiler::write_csv(const std::string& path) const { detail::write_file(path, csv()); }
void ResourceProfiler::write_svg(const std::string& path) const { detail::write_file(path, svg()); }

}  // namespace tessera::diagnostics
