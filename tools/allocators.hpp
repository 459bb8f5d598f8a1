// tools/allocators.hpp — the process's memory allocators held to a budget.
//
// The scheduler's memory_limit counts the bytes of the results it holds, but a
// freed block does not always leave the process: glibc's malloc raises its mmap
// threshold after each large free and then keeps such blocks in its heap, and
// oneTBB's scalable allocator caches freed large blocks for reuse, so the memory
// resident can be several times the results held. A command that promises a peak memory
// (tessera rechunk --max-mem, tessera graph run --memory-limit) calls this first:
// large blocks then come from and go back to the kernel, and oneTBB releases its
// caches whenever its heap passes the budget. Process-wide, hence in the tool and
// not in the library, whose callers own their allocators.
#pragma once

#include <cstdint>

namespace tessera::tool {

//! Keeps the allocators' retained memory within `budget` bytes (see above).
void bound_allocators(int64_t budget);

//! The opposite need: a command that builds a large graph and then runs it
//! without a budget (`tessera graph run` on a large file allocates its graph in
//! many small blocks) spends much of its CPU on the kernel's page faults when
//! the heap is mapped 4 KiB at a time. This reserves
//! `expected` bytes of glibc's heap up front as transparent huge pages
//! (madvise, which the kernel honours in its default `madvise` mode) and keeps
//! large blocks in that heap, so it is mapped 2 MiB at a time; the reservation
//! is address space only, pages become resident as they are used. A no-op where
//! the kernel or the allocator does not allow it.
void heap_in_huge_pages(uint64_t expected);

}  // namespace tessera::tool
