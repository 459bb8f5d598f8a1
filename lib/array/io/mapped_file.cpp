#include "tessera/array/io/mapped_file.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <csetjmp>
#include <csignal>
#include <cerrno>
#include <map>
#include <mutex>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"
#include "array/io/bus_guard.hpp"
#include "storage/pages.hpp"
#include "storage/unique_fd.hpp"
#include "storage/regular_file.hpp"

namespace tessera::array {

using storage::UniqueFd;
namespace {

// An empty file cannot be mapped; its views point here and have no bytes.
alignas(64) std::byte empty_file[64];

std::byte* map(const std::string& path, int fd, size_t size, Access access) {
  if (size == 0) return empty_file;
  int prot = access == Access::ReadWrite ? PROT_READ | PROT_WRITE : PROT_READ;
  void* p = ::mmap(nullptr, size, prot, MAP_SHARED, fd, 0);
  if (p == MAP_FAILED) throw StorageError(path, absl::StrCat("cannot map ", size, " bytes"), errno);
  return static_cast<std::byte*>(p);
}

// Live mappings by start address, so that a fault can name its file.
struct Mappings {
  std::mutex mu;
  std::map<uintptr_t, std::pair<uintptr_t, std::string>> by_start;  // start -> (end, path)
};
Mappings& mappings() {
  static auto* m = new Mappings;  // outlives every static MappedFile
  return *m;
}

// The guard of the running copy on this thread, and where it faulted.
// The handler must not allocate thread-local storage, which a first touch of a
// dynamic TLS variable may do. The initial-exec model would avoid that but makes
// the whole library's TLS static, and a library loaded by dlopen (the Python
// module's) then fails with "cannot allocate memory in static TLS block". So the
// handler reads the TLS only while some thread is inside a guard: that thread
// wrote active_guard before its copy, so its TLS block exists; a fault on another
// thread meanwhile is a crash either way.
thread_local sigjmp_buf* active_guard = nullptr;
thread_local void* fault_address = nullptr;
std::atomic<int> threads_in_guard{0};
struct sigaction previous_bus_action;

void on_bus(int sig, siginfo_t* info, void* context) {
  if (threads_in_guard.load(std::memory_order_acquire) > 0 && active_guard != nullptr) {
    fault_address = info->si_addr;
    siglongjmp(*active_guard, 1);
  }
  // Not a guarded copy: hand over to whoever handled SIGBUS before.
  if (previous_bus_action.sa_flags & SA_SIGINFO) {
    if (previous_bus_action.sa_sigaction != nullptr) return previous_bus_action.sa_sigaction(sig, info, context);
  } else if (previous_bus_action.sa_handler != SIG_DFL && previous_bus_action.sa_handler != SIG_IGN) {
    return previous_bus_action.sa_handler(sig);
  }
  ::sigaction(SIGBUS, &previous_bus_action, nullptr);  // the fault repeats and ends the process
}

void install_bus_handler() {
  static std::once_flag once;
  std::call_once(once, [] {
    struct sigaction sa {};
    sa.sa_sigaction = &on_bus;
    sa.sa_flags = SA_SIGINFO | SA_NODEFER;
    sigemptyset(&sa.sa_mask);
    ::sigaction(SIGBUS, &sa, &previous_bus_action);
  });
}

}  // namespace

namespace detail {

std::string mapped_path_of(const void* address) {
  const auto a = reinterpret_cast<uintptr_t>(address);
  std::lock_guard<std::mutex> lock(mappings().mu);
  auto it = mappings().by_start.upper_bound(a);
  if (it == mappings().by_start.begin()) return {};
  --it;
  return a < it->second.first ? it->second.second : std::string();
}

void guard_mapped_reads(absl::FunctionRef<void()> copy) {
  install_bus_handler();
  sigjmp_buf env;
  sigjmp_buf* const outer = active_guard;
  if (sigsetjmp(env, 1) != 0) {
    threads_in_guard.fetch_sub(1, std::memory_order_acq_rel);
    active_guard = outer;
    const void* at = fault_address;
    const std::string path = mapped_path_of(at);
    throw StorageError(path.empty() ? std::string("a memory-mapped file") : path,
                       "the file became shorter (or unreadable) while tessera was reading it through a mapping "
                       "(SIGBUS): another program truncated or rewrote it");
  }
  active_guard = &env;
  threads_in_guard.fetch_add(1, std::memory_order_acq_rel);
  try {
    copy();
  } catch (...) {
    threads_in_guard.fetch_sub(1, std::memory_order_acq_rel);
    active_guard = outer;
    throw;
  }
  threads_in_guard.fetch_sub(1, std::memory_order_acq_rel);
  active_guard = outer;
}

}  // namespace detail

MappedFile::MappedFile(Token, std::string path, std::byte* data, size_t size, Access access)
    : path_(std::move(path)), data_(data), size_(size), access_(access), mapped_(size > 0) {
  if (mapped_) {
    std::lock_guard<std::mutex> lock(mappings().mu);
    const auto start = reinterpret_cast<uintptr_t>(data_);
    mappings().by_start[start] = {start + size_, path_};
  }
}

MappedFile::~MappedFile() {
  if (mapped_) {
    {
      std::lock_guard<std::mutex> lock(mappings().mu);
      mappings().by_start.erase(reinterpret_cast<uintptr_t>(data_));
    }
    ::munmap(data_, size_);
  }
}

std::shared_ptr<MappedFile> MappedFile::open(const std::string& path, Access access) {
  const storage::RegularFile f = *storage::open_regular(path, access == Access::ReadWrite ? O_RDWR : O_RDONLY);
  const auto size = static_cast<size_t>(f.size);
  return std::make_shared<MappedFile>(Token{}, path, map(path, f.file.fd, size, access), size, access);
}

std::shared_ptr<MappedFile> MappedFile::create(const std::string& path, size_t size) {
  UniqueFd f{::open(path.c_str(), O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)};
  if (f.fd < 0) throw StorageError(path, "cannot create", errno);
  if (size > 0) {
    // Reserve every block now: writing to a mapped page the disk has no room for is a SIGBUS.
    int err = ::posix_fallocate(f.fd, 0, static_cast<off_t>(size));
    if (err == EOPNOTSUPP || err == ENOSYS) {
      err = ::ftruncate(f.fd, static_cast<off_t>(size)) == 0 ? 0 : errno;  // no fallocate here: best effort
    }
    if (err != 0) {
      ::unlink(path.c_str());
      throw StorageError(path, absl::StrCat("cannot reserve ", size, " bytes"), err);
    }
  }
  return std::make_shared<MappedFile>(Token{}, path, map(path, f.fd, size, Access::ReadWrite), size,
                                      Access::ReadWrite);
}

Buffer MappedFile::region(size_t offset, size_t length) {
  if (offset > size_ || length > size_ - offset) {
    throw StorageError(path_, absl::StrCat("expected ", length, " bytes at offset ", offset, ", but the file has ",
                                           size_, " bytes"));
  }
  // The deleter runs when the region's last view goes: its pages leave this
  // process's resident set, so a long read of a big file holds only the
  // regions in use. A mapping about to be unmapped needs no advice.
  std::shared_ptr<const MappedFile> self = shared_from_this();
  auto release = [self = std::move(self), length](std::byte* start) {
    if (self.use_count() > 1) self->advise(Advice::DontNeed, static_cast<size_t>(start - self->data()), length);
  };
  return Buffer(std::shared_ptr<std::byte>(data_ + offset, std::move(release)), length, writable());
}

void MappedFile::advise(Advice advice, size_t offset, size_t length) const {
  if (!mapped_ || offset >= size_) return;
  static constexpr int kAdvice[] = {MADV_NORMAL, MADV_SEQUENTIAL, MADV_RANDOM, MADV_WILLNEED, MADV_DONTNEED};
  // madvise wants a page-aligned start.
  const size_t page = tessera::detail::page_size();
  const size_t start = offset / page * page;
  const size_t end = length >= size_ - offset ? size_ : offset + length;
  ::madvise(data_ + start, end - start, kAdvice[static_cast<int>(advice)]);
}

void MappedFile::sync() const {
  if (!mapped_ || !writable()) return;
  if (::msync(data_, size_, MS_SYNC) != 0) throw StorageError(path_, "cannot write back (msync)", errno);
}

}  // namespace tessera::array
