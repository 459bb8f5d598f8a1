#include "storage/pages.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <mutex>
#include <new>
#include <utility>
#include <vector>

namespace tessera::detail {
namespace {

constexpr size_t kHugePage = size_t{2} << 20;

// What keep_pages holds at most. A chain of array tasks allocates a few blocks
// of one size, each freed while the next are alive (a rechunked block, its
// transform, the transform's power: three blocks, so one kept mapping left
// every third allocation fresh); more than a few kept would hold pages that no
// allocation of the run asks for again. Kept pages count in RSS until the
// kernel takes them back, hence the bound on bytes too.
constexpr size_t kMaxKept = 4;
constexpr size_t kMaxKeptBytes = size_t{1} << 30;

// The kept mappings, oldest first.
class Kept {
 public:
  // The smallest kept mapping of `length` bytes up to a quarter more, taken out.
  Pages take(size_t length) {
    std::lock_guard lock(mutex_);
    auto best = kept_.end();
    for (auto it = kept_.begin(); it != kept_.end(); ++it) {
      if (it->length >= length && it->length - length <= length / 4 &&
          (best == kept_.end() || it->length < best->length)) {
        best = it;
      }
    }
    if (best == kept_.end()) return {};
    const Pages p = *best;
    bytes_ -= p.length;
    kept_.erase(best);
    return p;
  }

  // Keeps `p`, unmapping the oldest kept past the bounds (or `p` itself, when
  // it alone is past them).
  void keep(Pages p) {
    std::vector<Pages> gone;
    {
      std::lock_guard lock(mutex_);
      if (p.length <= kMaxKeptBytes) {
        kept_.push_back(p);
        bytes_ += p.length;
      } else {
        gone.push_back(p);
      }
      while (kept_.size() > kMaxKept || bytes_ > kMaxKeptBytes) {
        gone.push_back(kept_.front());
        bytes_ -= kept_.front().length;
        kept_.erase(kept_.begin());
      }
    }
    for (const Pages& g : gone)
      ::munmap(g.data, g.length);  // outside the lock: munmap of a large mapping takes a while
  }

  void release() {
    std::vector<Pages> gone;
    {
      std::lock_guard lock(mutex_);
      gone.swap(kept_);
      bytes_ = 0;
    }
    for (const Pages& g : gone) ::munmap(g.data, g.length);
  }

  KeptPages count() {
    std::lock_guard lock(mutex_);
    return {kept_.size(), bytes_};
  }

 private:
  std::mutex mutex_;
  std::vector<Pages> kept_;
  size_t bytes_ = 0;
};

// Never destroyed: buffers may be freed by static destructors after main.
Kept& kept() {
  static auto* k = new Kept;
  return *k;
}

}  // namespace

void advise_huge_pages(void* p, size_t size) {
#if defined(MADV_HUGEPAGE)
  const auto begin = reinterpret_cast<uintptr_t>(p);
  const uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1), last = (begin + size) & ~(kHugePage - 1);
  if (last > first) ::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
#else
  (void)p;
  (void)size;
#endif
}

size_t page_size() {
  static const auto page = static_cast<size_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

ResidentMemory resident_memory() {
  std::FILE* f = std::fopen("/proc/self/statm", "re");
  if (f == nullptr) return {};
  unsigned long long size = 0, resident = 0, shared = 0;
  const bool read = std::fscanf(f, "%llu %llu %llu", &size, &resident, &shared) == 3;
  std::fclose(f);
  if (!read) return {};
  return {static_cast<size_t>(resident) * page_size(), static_cast<size_t>(shared) * page_size()};
}

void prefault_pages(void* p, size_t size) {
#if defined(MADV_POPULATE_WRITE)
  // madvise takes a page-aligned start: the machine's page, not 4 KiB (arm64 and
  // ppc64le kernels may use 16 or 64 KiB pages, where a 4 KiB-aligned start is EINVAL).
  const auto begin = reinterpret_cast<uintptr_t>(p) & ~(uintptr_t{page_size()} - 1);
  (void)::madvise(reinterpret_cast<void*>(begin), reinterpret_cast<uintptr_t>(p) + size - begin, MADV_POPULATE_WRITE);
#else
  (void)p;
  (void)size;
#endif
}

Pages take_pages(size_t size) {
  const size_t length = (size + kHugePage - 1) / kHugePage * kHugePage;
  if (Pages p = kept().take(length); p.data != nullptr) return p;
  void* q = ::mmap(nullptr, length, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (q == MAP_FAILED) throw std::bad_alloc();
  advise_huge_pages(q, length);
  return {static_cast<std::byte*>(q), length, true};
}

void keep_pages(Pages pages) {
  ::madvise(pages.data, pages.length, MADV_FREE);
  pages.zero = false;
  kept().keep(pages);
}

void release_kept_pages() { kept().release(); }

KeptPages kept_pages() { return kept().count(); }

}  // namespace tessera::detail
