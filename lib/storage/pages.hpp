// Pages of memory: huge pages for large buffers, and the builds whose sanitizer
// must see every allocation.
#pragma once

#include <cstddef>

#include "base/sanitizers.hpp"

namespace tessera::detail {

//! Anonymous memory for a large buffer, from take_pages.
struct Pages {
  std::byte* data = nullptr;  //!< the mapping's first byte
  size_t length = 0;          //!< its length, for keep_pages
  bool zero = false;          //!< true for fresh pages (zeros); a kept mapping holds old bytes
};

//! At least `size` bytes of anonymous pages, rounded up to whole 2 MiB pages
//! with huge pages requested (advise_huge_pages): a kept mapping (keep_pages)
//! of that length up to a quarter more when there is one, else a fresh one.
//! Throws std::bad_alloc when the kernel has none. Thread-safe.
Pages take_pages(size_t size);

//! Keeps `pages` (from take_pages) for a later take_pages instead of unmapping
//! them: fresh pages cost more than most work that fills them (the kernel
//! zeroes each on first touch). The pages are marked MADV_FREE, so the kernel
//! may take them back under memory pressure (they read as zeros then); at most
//! a few mappings and a bounded total are kept, the oldest unmapped first.
//! Thread-safe.
void keep_pages(Pages pages);

//! Unmaps every kept mapping, so they no longer count in the process's RSS.
//! Thread-safe.
void release_kept_pages();

//! The mappings and bytes kept now (for tests).
struct KeptPages {
  size_t mappings = 0;
  size_t bytes = 0;
};
KeptPages kept_pages();

//! The system's page size (sysconf(_SC_PAGESIZE), read once): what madvise's
//! start must be a multiple of, and the unit of /proc's page counts.
size_t page_size();

//! The process's resident memory in bytes, as /proc/self/statm counts it: all
//! of it, and the part backed by files (mapped files, libraries; Linux's
//! "shared"), so that resident - file_backed is its anonymous memory. Zeros
//! where /proc cannot be read.
struct ResidentMemory {
  size_t resident = 0;
  size_t file_backed = 0;
};
ResidentMemory resident_memory();

//! Asks the kernel to back the whole 2 MiB pages inside [p, p + size) with huge
//! pages (madvise MADV_HUGEPAGE), as numpy does for its large arrays: a fresh
//! 16 MiB buffer in small pages takes 4096 faults. Does nothing where the
//! system has no such advice.
void advise_huge_pages(void* p, size_t size);

//! Backs the pages of [p, p + size) now, in one call (madvise
//! MADV_POPULATE_WRITE), for a buffer about to be written whole: each first
//! touch of a page is a fault, and on a virtual machine a fault costs several
//! microseconds (the 4-rank FFT of bench/mpi took 0.76 M faults and 11-12 s;
//! with its blocks backed this way, 0.08 M and 9.5-11 s). Pages already backed
//! cost a walk of their table entries. Does nothing where the kernel (before
//! 5.14) or the system has no such advice.
void prefault_pages(void* p, size_t size);

//! True under AddressSanitizer or ThreadSanitizer. They see memory only through
//! malloc and free: a block that oneTBB's allocator (or a cache of tessera's)
//! hands out again looks to ASan like live memory and to TSan like a race
//! between the threads that had it, so such builds take those blocks from the heap.
inline constexpr bool kSanitizedHeap = TESSERA_ASAN || TESSERA_TSAN;

}  // namespace tessera::detail
