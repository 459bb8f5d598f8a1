// Pages of memory: huge pages for large buffers, and the builds whose sanitizer
// must see every allocation.
#pragma once

#include <cstddef>

namespace tessera::detail {

//! Asks the kernel to back the whole 2 MiB pages inside [p, p + size) with huge
//! pages (madvise MADV_HUGEPAGE), as numpy does for its large arrays: a fresh
//! 16 MiB buffer in small pages takes 4096 faults. Does nothing where the
//! system has no such advice.
void advise_huge_pages(void* p, size_t size);

//! True under AddressSanitizer or ThreadSanitizer. They see memory only through
//! malloc and free: a block that oneTBB's allocator (or a cache of tessera's)
//! hands out again looks to ASan like live memory and to TSan like a race
//! between the threads that had it, so such builds take those blocks from the heap.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kSanitizedHeap = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
inline constexpr bool kSanitizedHeap = true;
#else
inline constexpr bool kSanitizedHeap = false;
#endif
#else
inline constexpr bool kSanitizedHeap = false;
#endif

}  // namespace tessera::detail
