// python/src/python_stderr.hpp — C++ text output through Python's sys.stderr.
//
// tessera's progress bars draw on a std::ostream; from Python they draw through
// `sys.stderr.write`, as a Python library's output goes, so that pytest's capture,
// Jupyter and `contextlib.redirect_stderr` catch it (file descriptor 2 would bypass
// them all). sys.stderr is looked up at each flush, so a redirect made while a run
// is going is followed. The bar draws from its own ticker thread: each flush takes
// the GIL, which the caller released while it waits for the run.
#pragma once

#include <pybind11/pybind11.h>

#include <ios>
#include <ostream>
#include <streambuf>
#include <string>

#include "tessera/diagnostics/progress.hpp"

namespace tessera::python {

//! A stream buffer that keeps what is written until a flush, then hands it to sys.stderr.
class PythonStderrBuffer : public std::streambuf {
 public:
  ~PythonStderrBuffer() override { sync(); }

 protected:
  int_type overflow(int_type c) override {
    if (!traits_type::eq_int_type(c, traits_type::eof())) pending_.push_back(traits_type::to_char_type(c));
    return traits_type::not_eof(c);
  }
  std::streamsize xsputn(const char* s, std::streamsize n) override {
    pending_.append(s, static_cast<size_t>(n));
    return n;
  }
  // Writes and flushes sys.stderr; an error there (a closed stream) is Python's
  // unraisable-exception hook's to show, as for any failed write in a callback.
  int sync() override {
    if (pending_.empty()) return 0;
    pybind11::gil_scoped_acquire gil;
    try {
      const pybind11::object err = pybind11::module_::import("sys").attr("stderr");
      if (!err.is_none()) {
        err.attr("write")(pybind11::str(pending_.data(), pending_.size()));
        err.attr("flush")();
      }
    } catch (pybind11::error_already_set& e) {
      e.discard_as_unraisable("tessera: writing to sys.stderr");
    }
    pending_.clear();
    return 0;
  }

 private:
  std::string pending_;
};

//! An output stream onto Python's sys.stderr.
class PythonStderr : public std::ostream {
 public:
  PythonStderr() : std::ostream(nullptr) { rdbuf(&buffer_); }

 private:
  PythonStderrBuffer buffer_;
};

//! A progress bar's options that draw it on `out` (which must outlive the bar).
inline diagnostics::ProgressBar::Options progress_on(PythonStderr& out) {
  diagnostics::ProgressBar::Options options;
  options.out = &out;
  return options;
}

}  // namespace tessera::python
