// Reading a memory-mapped file that another program truncates: the kernel
// answers a read past the new end with SIGBUS, which would kill the process.
// guard_mapped_reads runs a copy with a per-thread guard: a SIGBUS inside it
// jumps back out of the copy, and the copy fails with StorageError naming the
// mapped file that faulted. Threads guard independently (the jump target is
// thread-local); a SIGBUS outside any guard goes to the handler that was there
// before (the default: the process ends).
//
// The copy must hold nothing that needs a destructor across the faulting
// access (plain loops over raw pointers): the jump skips such frames.
#pragma once

#include <string>

#include <absl/functional/function_ref.h>

namespace tessera::array::detail {

//! Runs `copy`; StorageError when it faults on a mapped file (see above).
void guard_mapped_reads(absl::FunctionRef<void()> copy);

//! The path of the live MappedFile holding `address`, or "" (for messages).
std::string mapped_path_of(const void* address);

}  // namespace tessera::array::detail
