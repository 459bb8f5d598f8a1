#include "tessera/diagnostics/progress.hpp"

#include <algorithm>
#include <string>

#include <absl/strings/str_format.h>

#include "ticker.hpp"

namespace tessera::diagnostics {

ProgressBar::ProgressBar() : ProgressBar(Options{}) {}

ProgressBar::ProgressBar(Options options) : options_(options), ticker_(std::make_unique<detail::Ticker>()) {
  options_.dt = std::max(options_.dt, std::chrono::duration<double>(0.1));
  options_.width = std::max(options_.width, 1);
}

ProgressBar::~ProgressBar() = default;

Callbacks ProgressBar::callbacks() {
  Callbacks cb;
  cb.start = [this](const RunState& state) {
    started_ = std::chrono::steady_clock::now();
    ticker_->start(options_.dt, [this, &state] {
      const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
      if (elapsed >= options_.minimum.count()) draw(state.num_finished(), state.num_tasks(), elapsed, false);
    });
  };
  cb.finish = [this](const RunState& state, bool) {
    ticker_->stop();
    const double elapsed = std::chrono::duration<double>(std::chrono::steady_clock::now() - started_).count();
    if (elapsed >= options_.minimum.count()) draw(state.num_finished(), state.num_tasks(), elapsed, true);
  };
  return cb;
}

void ProgressBar::draw(size_t done, size_t total, double elapsed, bool last) {
  const double share = total == 0 ? 1.0 : static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(share * options_.width);
  std::string line = absl::StrFormat("\r[%s%s] | %3d%% Completed | %d/%d tasks | %.1fs",
                                     std::string(static_cast<size_t>(filled), '#'),
                                     std::string(static_cast<size_t>(options_.width - filled), ' '),
                                     static_cast<int>(share * 100), done, total, elapsed);
  *options_.out << line;
  if (last) *options_.out << '\n';
  options_.out->flush();
}

}  // namespace tessera::diagnostics
