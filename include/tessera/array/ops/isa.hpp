// tessera/array/ops/isa.hpp — which instruction set tessera's array kernels run on.
//
// One build of tessera holds its hot kernels (the GEMM of matmul and tensordot)
// compiled several times: for baseline x86-64 (SSE2), for AVX2 with FMA, and for
// AVX-512 (F, DQ, BW, VL). At the first call the library picks the widest set the
// CPU runs, once for the process; the environment variable TESSERA_ISA
// (`sse2`, `avx2`, `avx512`) forces one, for tests and benchmarks, and naming a
// set that is unknown or that the CPU cannot run is an Error at that first call.
// A build configured with -Dnative=true holds one set, `native`, built for the
// build machine alone. docs/kernels.md says more.
//
//   const tessera::array::KernelIsa k = tessera::array::kernel_isa();
//   std::printf("kernels: %s (this CPU runs: %s)\n", k.running.c_str(),
//               absl::StrJoin(k.supported, " ").c_str());
#pragma once

#include <string>
#include <vector>

namespace tessera::array {

//! What kernel_isa() reports.
struct KernelIsa {
  std::string running;                 //!< the set the kernels run: "sse2", "avx2", "avx512" or "native"
  std::string requested;               //!< TESSERA_ISA's value, empty when unset
  std::vector<std::string> built;      //!< the sets this build holds, narrowest first
  std::vector<std::string> supported;  //!< those of `built` this CPU runs
  std::vector<std::string> features;   //!< the CPU features the choice looks at, those the CPU has
};

//! The kernel set this process runs and why; Error (naming the accepted values)
//! when TESSERA_ISA names a set that is unknown or that the CPU cannot run.
//! Thread-safe.
//! @code
//!   if (tessera::array::kernel_isa().running == "sse2") std::puts("no AVX2 on this CPU");
//! @endcode
KernelIsa kernel_isa();

}  // namespace tessera::array
