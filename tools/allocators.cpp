#include "allocators.hpp"

#include <malloc.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>

#include <oneapi/tbb/scalable_allocator.h>

#include "storage/pages.hpp"

namespace tessera::tool {

void bound_allocators(int64_t budget) {
  // A fixed threshold stops glibc from raising it: every block from 256 KiB up
  // is its own mapping, unmapped when freed.
  ::mallopt(M_MMAP_THRESHOLD, 256 << 10);
  // Fixing that threshold also fixes the trim threshold at its default, 128 KiB:
  // the heap was handed back to the kernel each time the blocks under 256 KiB
  // (a rechunk's input chunks) were freed in a wave, and faulted in again by the
  // next wave, each give-back a TLB shootdown on every core running the process.
  // A quarter of the budget may stay free at the heap's top instead.
  ::mallopt(M_TRIM_THRESHOLD, static_cast<int>(std::clamp<int64_t>(budget / 4, 128 << 10, INT32_MAX)));
  scalable_allocation_mode(TBBMALLOC_SET_SOFT_HEAP_LIMIT, static_cast<intptr_t>(budget));
}

void heap_in_huge_pages(uint64_t expected) {
  // At most half the machine's memory of address space, so that the one large
  // extension of the heap below never fails for its size.
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGESIZE);
  if (pages <= 0 || page <= 0) return;
  const uint64_t reserve = std::min<uint64_t>(expected, uint64_t(pages) * uint64_t(page) / 2);
  // Blocks of any size come from the heap (glibc would map each large one on
  // its own, in small pages, and unmap it when freed), and the heap is never
  // trimmed: what this reserves stays reserved.
  ::mallopt(M_MMAP_MAX, 0);
  ::mallopt(M_TRIM_THRESHOLD, INT32_MAX);
  // The next extension of the heap takes `reserve` at once...
  ::mallopt(M_TOP_PAD, static_cast<int>(std::min<uint64_t>(reserve, INT32_MAX)));
  const auto before = reinterpret_cast<uintptr_t>(::sbrk(0));
  // More than the heap has free, so that it extends; volatile, or the compiler
  // drops the pair of calls.
  void* volatile grow = std::malloc(size_t{1} << 20);
  std::free(grow);
  ::mallopt(M_TOP_PAD, 128 << 10);  // glibc's default again for any later extension
  const auto after = reinterpret_cast<uintptr_t>(::sbrk(0));
  // ...and the part of it on whole huge pages is mapped in huge pages.
  tessera::detail::advise_huge_pages(reinterpret_cast<void*>(before), after - before);
}

}  // namespace tessera::tool
