// tessera/diagnostics/progress.hpp — a progress bar for runs, on stderr.
//
// As dask.diagnostics.ProgressBar: a line redrawn in place with the share of
// tasks done, done/total and the elapsed time, at most every `dt` (never more
// than 10 times a second), from a background thread so slow tasks do not freeze
// it. Runs shorter than `minimum` print nothing at all.
//
// @code
//   tessera::diagnostics::ProgressBar bar({.minimum = std::chrono::seconds(1)});
//   tessera::get(g, "w", {.callbacks = {bar.callbacks()}});
//   // [########################################] | 100% Completed | 200/200 tasks | 3.1s
// @endcode
//
// The bar must outlive the runs that use its callbacks. One run at a time.
#pragma once

#include <chrono>
#include <iostream>
#include <memory>
#include <ostream>

#include "tessera/scheduler/callbacks.hpp"

namespace tessera::diagnostics {

namespace detail {
class Ticker;
}

//! A text progress bar on stderr, as dask's ProgressBar: attach its callbacks() to a run.
class ProgressBar {
 public:
  //! How and where the bar is drawn.
  struct Options {
    //! Runs shorter than this print nothing.
    std::chrono::duration<double> minimum{0};
    //! Time between redraws; raised to 0.1 s when smaller.
    std::chrono::duration<double> dt{0.1};
    //! Characters of the bar.
    int width = 40;
    //! Where to draw.
    std::ostream* out = &std::cerr;
  };

  ProgressBar();
  //! A bar drawn as `options` says.
  explicit ProgressBar(Options options);
  ~ProgressBar();

  //! The hooks to put in GetOptions::callbacks.
  //! @code
  //!   tessera::get(g, "w", {.callbacks = {bar.callbacks()}});
  //! @endcode
  Callbacks callbacks();

 private:
  void draw(size_t done, size_t total, double elapsed, bool last);

  Options options_;
  std::unique_ptr<detail::Ticker> ticker_;
  std::chrono::steady_clock::time_point started_;
};

}  // namespace tessera::diagnostics
