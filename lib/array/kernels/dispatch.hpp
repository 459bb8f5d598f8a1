// Private: how dispatch.cpp chooses a kernel set, apart from the CPU it runs on
// (tests/array/ops/isa_test.cpp drives it with made-up CPUs).
#pragma once

#include <string>
#include <utility>
#include <string_view>
#include <vector>

#include "array/kernels/table.hpp"

namespace tessera::array::kernels {

//! The set to run: `requested` (TESSERA_ISA's value) when it is one of `built`
//! and in `supported`, the last (widest) of `supported` when `requested` is empty;
//! Error naming the accepted values otherwise.
std::string choose_isa(std::string_view requested, const std::vector<std::string>& built,
                       const std::vector<std::string>& supported);

//! The tables of the sets this build holds that this CPU runs, by name,
//! narrowest first (the tests compare every set's kernels on one run).
std::vector<std::pair<std::string, const Table*>> runnable_tables();

}  // namespace tessera::array::kernels
