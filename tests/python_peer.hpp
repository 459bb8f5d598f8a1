// Whether the Python peer is there: the tests that compare tessera with numpy, dask
// or python3-zarr run $TESSERA_PYTHON. `meson test` sets it to /usr/bin/python3 when
// that Python imports numpy, dask and zarr (tests/meson.build). Without it those
// tests are skipped, and the run ends by saying how many and why; under CI=true
// they run anyway and fail, so a CI machine without the peer cannot pass quietly:
//   TEST_CASE("sums equal numpy's" * python_peer::needed()) { ... }
#pragma once

#include <doctest/doctest.h>

#include <cstdlib>
#include <set>
#include <string>
#include <string_view>
#include <utility>

namespace python_peer {

//! True when $TESSERA_PYTHON names a Python to compare with.
inline bool available() {
  const char* python = std::getenv("TESSERA_PYTHON");
  return python != nullptr && *python != '\0';
}

//! True under CI=true, where a missing peer is a failure, not a skip.
inline bool ci() {
  const char* ci = std::getenv("CI");
  return ci != nullptr && std::string_view(ci) == "true";
}

//! Why the peer is missing, for messages.
inline constexpr const char* missing_reason =
    "TESSERA_PYTHON is not set: /usr/bin/python3 lacks numpy, dask, zarr or crcmod (see tests/meson.build), "
    "or the test binary ran outside `meson test`";

//! The test cases (file, line) marked by needed(); the listener in tests/main.cpp
//! counts those that ran and those skipped.
inline std::set<std::pair<std::string, int>>& marked() {
  static std::set<std::pair<std::string, int>> cases;
  return cases;
}

//! The peer's interpreter; fails the running test when there is none (reached
//! only under CI=true, where needed() does not skip).
inline std::string python() {
  if (!available()) FAIL("this test compares with the python peer, which must run under CI=true: " << std::string(missing_reason));
  return std::getenv("TESSERA_PYTHON");
}

//! A TEST_CASE decorator: skip this test when there is no Python peer, except
//! under CI=true, where it runs and fails.
struct needed {
  void fill(doctest::detail::TestCase& tc) const {
    marked().emplace(tc.m_file.c_str(), tc.m_line);
    tc.m_skip = !available() && !ci();
  }
  void fill(doctest::detail::TestSuite&) const {}
};

//! Counts of marked cases in this run, filled by the listener.
struct Counts {
  int ran = 0;
  int skipped = 0;
};
inline Counts& counts() {
  static Counts c;
  return c;
}

//! Whether `tc` is a case marked by needed().
inline bool is_marked(const doctest::TestCaseData& tc) {
  return marked().count({tc.m_file.c_str(), tc.m_line}) != 0;
}

}  // namespace python_peer
