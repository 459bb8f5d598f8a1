#include "storage/pages.hpp"

#include <sys/mman.h>

#include <cstdint>

namespace tessera::detail {

void advise_huge_pages(void* p, size_t size) {
#if defined(MADV_HUGEPAGE)
  constexpr uintptr_t kHuge = uintptr_t{2} << 20;
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + kHuge - 1) & ~(kHuge - 1), last = (begin + size) & ~(kHuge - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)size;
#endif
}

}  // namespace tessera::detail
