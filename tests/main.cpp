// The doctest main of every suite, with a listener that counts the cases marked
// python_peer::needed(): a run without the peer ends by saying how many were
// skipped and why, and under CI=true such a run fails (tests/python_peer.hpp).
#define DOCTEST_CONFIG_IMPLEMENT
#include <doctest/doctest.h>

#include <iostream>

#include "python_peer.hpp"

namespace {

struct PythonPeerListener : doctest::IReporter {
  explicit PythonPeerListener(const doctest::ContextOptions& /*options*/) {}
  void report_query(const doctest::QueryData& /*data*/) override {}
  void test_run_start() override {}
  void test_run_end(const doctest::TestRunStats& /*stats*/) override {}
  void test_case_start(const doctest::TestCaseData& tc) override {
    if (python_peer::is_marked(tc)) ++python_peer::counts().ran;
  }
  void test_case_reenter(const doctest::TestCaseData& /*tc*/) override {}
  void test_case_end(const doctest::CurrentTestCaseStats& /*stats*/) override {}
  void test_case_exception(const doctest::TestCaseException& /*e*/) override {}
  void subcase_start(const doctest::SubcaseSignature& /*s*/) override {}
  void subcase_end() override {}
  void log_assert(const doctest::AssertData& /*data*/) override {}
  void log_message(const doctest::MessageData& /*data*/) override {}
  void test_case_skipped(const doctest::TestCaseData& tc) override {
    if (tc.m_skip && python_peer::is_marked(tc)) ++python_peer::counts().skipped;
  }
};

}  // namespace

DOCTEST_REGISTER_LISTENER("python_peer", 1, PythonPeerListener);

int main(int argc, char** argv) {
  doctest::Context context(argc, argv);
  int status = context.run();
  if (context.shouldExit()) return status;
  const python_peer::Counts& c = python_peer::counts();
  if (c.skipped > 0) {
    std::cout << "[python peer] " << c.skipped
              << " test case(s) that compare with numpy, dask or zarr-python were skipped: "
              << python_peer::missing_reason << "\n";
  }
  if (python_peer::ci() && !python_peer::available() && c.ran > 0) {
    std::cout << "[python peer] " << c.ran << " test case(s) ran without the python peer under CI=true: "
              << python_peer::missing_reason << "\n";
    status = status != 0 ? status : 1;
  }
  return status;
}
