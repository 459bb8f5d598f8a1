// The program as a whole: dispatch, help and usage errors.
#include "tool_test.hpp"

#include <doctest/doctest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <stdexcept>

namespace tessera::tool_test {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) throw std::runtime_error(std::string(name) + " is not set (run the tests with meson test)");
  return v;
}

}  // namespace

std::string read_text(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

std::string data(const std::string& name) {
  return env("TESSERA_SOURCE_ROOT") + "/tests/tools/data/" + name;
}

Run run_tessera(const std::string& args) {
  const std::string stem = "tool_test_" + std::to_string(getpid());
  const std::string cmd = env("TESSERA_TOOL") + " " + args + " >" + stem + ".out 2>" + stem + ".err";
  const int raw = std::system(cmd.c_str());
  Run r;
  r.status = WIFEXITED(raw) ? WEXITSTATUS(raw) : -1;
  r.out = read_text(stem + ".out");
  r.err = read_text(stem + ".err");
  std::remove((stem + ".out").c_str());
  std::remove((stem + ".err").c_str());
  return r;
}

}  // namespace tessera::tool_test

using tessera::tool_test::run_tessera;

TEST_CASE("without arguments the program prints its groups and exits with 2") {
  auto r = run_tessera("");
  CHECK(r.status == 2);
  CHECK(r.err.find("Usage: tessera") != std::string::npos);
  CHECK(r.err.find("expected a command (graph, rechunk, info)") != std::string::npos);
}

TEST_CASE("--help prints the groups on stdout and succeeds") {
  auto r = run_tessera("--help");
  CHECK(r.status == 0);
  CHECK(r.out.find("graph") != std::string::npos);
}

TEST_CASE("an unknown group is named, with the usage, exit 2") {
  auto r = run_tessera("frobnicate x");
  CHECK(r.status == 2);
  CHECK(r.err.find("not expected: x frobnicate") != std::string::npos);
  CHECK(r.err.find("Usage:") != std::string::npos);
}

TEST_CASE("a group's --help lists its commands") {
  auto r = run_tessera("graph --help");
  CHECK(r.status == 0);
  for (const char* cmd : {"inspect", "dot", "run"}) CHECK(r.out.find(cmd) != std::string::npos);
}

TEST_CASE("every command has --help, written from its options") {
  struct Case {
    const char* args;
    const char* says;
  };
  for (const Case& c : {Case{"help", "rechunk"}, Case{"graph inspect --help", "--json"},
                        Case{"graph dot -h", "FILE.json"}, Case{"graph run --help", "--memory-limit"},
                        Case{"rechunk --help", "--dry-run"}, Case{"rechunk --help", "--src-chunks"},
                        Case{"info --help", "PATH"}}) {
    CAPTURE(c.args);
    auto r = run_tessera(c.args);
    CHECK(r.status == 0);
    CHECK(r.out.find("Usage: tessera") != std::string::npos);
    CHECK(r.out.find(c.says) != std::string::npos);
    CHECK(r.err.empty());
  }
}
