// Tests of `tessera info --cpu`: the kernel set tessera runs, and TESSERA_ISA.
#include <doctest/doctest.h>

#include <stdlib.h>

#include <optional>
#include <string>

#include "tools/tool_test.hpp"

using tessera::tool_test::Run;
using tessera::tool_test::run_tessera;

namespace {

// `tessera info --cpu` with TESSERA_ISA set to `isa` (unset: nullopt), the test's own value restored after.
Run info_cpu(std::optional<std::string> isa) {
  const char* old = getenv("TESSERA_ISA");
  const std::optional<std::string> saved = old ? std::optional<std::string>(old) : std::nullopt;
  if (isa) {
    setenv("TESSERA_ISA", isa->c_str(), 1);
  } else {
    unsetenv("TESSERA_ISA");
  }
  Run r = run_tessera("info --cpu");
  if (saved) {
    setenv("TESSERA_ISA", saved->c_str(), 1);
  } else {
    unsetenv("TESSERA_ISA");
  }
  return r;
}

// The value of the line "Name : value" of `out`.
std::string field(const std::string& out, const std::string& name) {
  const size_t at = out.find(name);
  if (at == std::string::npos) return "";
  const size_t start = out.find(": ", at) + 2;
  return out.substr(start, out.find('\n', start) - start);
}

}  // namespace

TEST_CASE("tessera info --cpu: the widest kernel set the CPU runs, unless TESSERA_ISA forces one") {
  const Run r = info_cpu(std::nullopt);
  REQUIRE_MESSAGE(r.status == 0, r.err);
  const std::string runs = field(r.out, "CPU runs");
  REQUIRE(!runs.empty());
  const std::string widest = runs.substr(runs.rfind(' ') + 1);
  CHECK(field(r.out, "Kernels") == widest + " (the widest this CPU runs)");
  CHECK(field(r.out, "Built").find(widest) != std::string::npos);

  const std::string narrowest = runs.substr(0, runs.find(' '));
  const Run forced = info_cpu(narrowest);
  REQUIRE_MESSAGE(forced.status == 0, forced.err);
  CHECK(field(forced.out, "Kernels") == narrowest + " (TESSERA_ISA)");
}

TEST_CASE("tessera info --cpu: an unknown TESSERA_ISA is an error naming the accepted values") {
  const Run r = info_cpu("bogus");
  CHECK(r.status == 2);
  CHECK(r.err.find("TESSERA_ISA: expected one of ") != std::string::npos);
  CHECK(r.err.find("found 'bogus'") != std::string::npos);
}

TEST_CASE("tessera info: PATH or --cpu, one of them") {
  CHECK(run_tessera("info").status == 2);
  CHECK(run_tessera("info --cpu some.npy").status == 2);
}
