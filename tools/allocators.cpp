#include "allocators.hpp"

#include <malloc.h>

#include <oneapi/tbb/scalable_allocator.h>

namespace tessera::tool {

void bound_allocators(int64_t budget) {
  // A fixed threshold stops glibc from raising it: every block from 256 KiB up
  // is its own mapping, unmapped when freed.
  ::mallopt(M_MMAP_THRESHOLD, 256 << 10);
  scalable_allocation_mode(TBBMALLOC_SET_SOFT_HEAP_LIMIT, static_cast<intptr_t>(budget));
}

}  // namespace tessera::tool
