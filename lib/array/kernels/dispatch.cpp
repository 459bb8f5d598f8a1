// The choice of a kernel set (table.hpp): once per process, at the first call,
// by the CPU's features and TESSERA_ISA.
//
// The CPU is asked through GCC's __builtin_cpu_supports, which also checks that
// the operating system saves the wider registers (XCR0), so a set is only
// chosen where its instructions run. A set's -m flags in meson.build and its
// test here name the same features.
#include "array/kernels/dispatch.hpp"

#include <algorithm>
#include <cstdlib>
#include <string>
#include <vector>

#include <absl/strings/str_cat.h>
#include <absl/strings/str_join.h>

#include "array/kernels/table.hpp"
#include "tessera/array/ops/isa.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array {
namespace kernels {
namespace {

// The sets this build holds, narrowest first, with their tables.
struct Built {
  const char* name;
  const Table& (*table)();
};

#if defined(TESSERA_KERNELS_NATIVE)
const Built kBuilt[] = {{"native", isa_native::table}};
#elif defined(TESSERA_KERNELS_X86)
const Built kBuilt[] = {{"sse2", isa_sse2::table}, {"avx2", isa_avx2::table}, {"avx512", isa_avx512::table}};
#else
const Built kBuilt[] = {{"generic", isa_generic::table}};
#endif

#if defined(TESSERA_KERNELS_X86)
// The features each x86 set's flags (meson.build) let the compiler use.
bool avx2_runs() { return __builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma"); }
bool avx512_runs() {
  return avx2_runs() && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
         __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
}
#endif

bool runs(const std::string& name) {
#if defined(TESSERA_KERNELS_X86)
  if (name == "avx2") return avx2_runs();
  if (name == "avx512") return avx512_runs();
#endif
  return true;  // the baseline, and a native build (made for this machine)
}

std::vector<std::string> features() {
  std::vector<std::string> out;
#if defined(__x86_64__)
  __builtin_cpu_init();
  // __builtin_cpu_supports takes a string literal, hence one test per name.
  if (__builtin_cpu_supports("sse2")) out.emplace_back("sse2");
  if (__builtin_cpu_supports("avx")) out.emplace_back("avx");
  if (__builtin_cpu_supports("avx2")) out.emplace_back("avx2");
  if (__builtin_cpu_supports("fma")) out.emplace_back("fma");
  if (__builtin_cpu_supports("avx512f")) out.emplace_back("avx512f");
  if (__builtin_cpu_supports("avx512dq")) out.emplace_back("avx512dq");
  if (__builtin_cpu_supports("avx512bw")) out.emplace_back("avx512bw");
  if (__builtin_cpu_supports("avx512vl")) out.emplace_back("avx512vl");
#endif
  return out;
}

KernelIsa survey() {
  KernelIsa k;
  if (const char* r = std::getenv("TESSERA_ISA")) k.requested = r;
  for (const Built& b : kBuilt) {
    k.built.emplace_back(b.name);
    if (runs(b.name)) k.supported.emplace_back(b.name);
  }
  k.features = features();
  k.running = choose_isa(k.requested, k.built, k.supported);
  return k;
}

// The survey of the first call; a bad TESSERA_ISA throws again at every call.
const KernelIsa& chosen() {
  static const KernelIsa k = survey();
  return k;
}

}  // namespace

std::string choose_isa(std::string_view requested, const std::vector<std::string>& built,
                       const std::vector<std::string>& supported) {
  if (requested.empty()) return supported.empty() ? built.front() : supported.back();
  auto has = [](const std::vector<std::string>& v, std::string_view s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  };
  // A short prefix of a bad value: it comes from the environment, of any length.
  const std::string shown(requested.substr(0, 32));
  if (!has(built, requested)) {
    throw Error(absl::StrCat("TESSERA_ISA: expected one of ", absl::StrJoin(built, ", "), " (the kernel sets of this ",
                             "build), found '", shown, requested.size() > shown.size() ? "...'" : "'"));
  }
  if (!has(supported, requested)) {
    throw Error(absl::StrCat("TESSERA_ISA: this CPU cannot run the ", shown, " kernels; it runs ",
                             absl::StrJoin(supported, ", ")));
  }
  return std::string(requested);
}

std::vector<std::pair<std::string, const Table*>> runnable_tables() {
  std::vector<std::pair<std::string, const Table*>> out;
  for (const Built& b : kBuilt) {
    if (runs(b.name)) out.emplace_back(b.name, &b.table());
  }
  return out;
}

const Table& active() {
  static const Table* t = [] {
    const std::string& name = chosen().running;
    for (const Built& b : kBuilt) {
      if (name == b.name) return &b.table();
    }
    return &kBuilt[0].table();  // not reached: choose_isa returns a built name
  }();
  return *t;
}

}  // namespace kernels

KernelIsa kernel_isa() { return kernels::chosen(); }

}  // namespace tessera::array
