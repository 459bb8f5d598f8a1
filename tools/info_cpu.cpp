// tools/info_cpu.cpp — `tessera info --cpu`: the kernel set this process runs
// (tessera/array/ops/isa.hpp), the sets the build holds and the CPU runs, and the
// CPU features the choice looks at. A bad TESSERA_ISA is an error here as in any
// computation (exit status 2, the message naming the accepted values).
#include <cstdio>

#include <absl/strings/str_join.h>

#include "command.hpp"
#include "tessera/array/ops/isa.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::tool {

int print_cpu() {
  array::KernelIsa k;
  try {
    k = array::kernel_isa();
  } catch (const Error& e) {
    throw UsageError(e.what());
  }
  std::printf("Kernels            : %s%s\n", k.running.c_str(),
              k.requested.empty() ? " (the widest this CPU runs)" : " (TESSERA_ISA)");
  std::printf("Built              : %s\n", absl::StrJoin(k.built, " ").c_str());
  std::printf("CPU runs           : %s\n", absl::StrJoin(k.supported, " ").c_str());
  std::printf("CPU features       : %s\n", absl::StrJoin(k.features, " ").c_str());
  return 0;
}

}  // namespace tessera::tool
