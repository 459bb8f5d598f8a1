// The owner field of temporaries' names (owner.hpp says why these parts).
#include "storage/owner.hpp"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <climits>
#include <cstdint>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>

#include "tessera/graph/token.hpp"

namespace tessera::storage {
namespace {

// The start of a small /proc file ("" when it cannot be read).
std::string read_small(const char* path) {
  char buf[128];
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  ssize_t n;
  do {
    n = ::read(fd, buf, sizeof buf);
  } while (n < 0 && errno == EINTR);
  ::close(fd);
  return n > 0 ? std::string(buf, static_cast<size_t>(n)) : std::string();
}

// This process's kernel field: the same in every process of one host name,
// boot and PID namespace. Where /proc is missing, the host name alone.
std::string kernel_field() {
  char host[HOST_NAME_MAX + 1] = {};
  if (::gethostname(host, sizeof host - 1) != 0) host[0] = '\0';
  char ns[64] = {};
  const ssize_t n = ::readlink("/proc/self/ns/pid", ns, sizeof ns - 1);
  if (n < 0) ns[0] = '\0';
  return token({"tessera-owner", host, read_small("/proc/sys/kernel/random/boot_id"), ns});
}

// The kernel field, computed once per process: a thread's cached copy is
// refreshed when the process id changed (a fork, which may be followed by new
// namespaces in the child), not on every temporary (a store writes thousands).
const std::string& this_kernel() {
  thread_local pid_t pid = 0;
  thread_local std::string field;
  if (pid != ::getpid()) {
    pid = ::getpid();
    field = kernel_field();
  }
  return field;
}

bool alive(pid_t pid) { return pid == ::getpid() || ::kill(pid, 0) == 0 || errno == EPERM; }

}  // namespace

std::string owner_field() { return absl::StrCat(::getpid(), "@", this_kernel()); }

bool owner_gone(std::string_view rest) {
  const size_t dash = rest.find('-');
  if (dash == std::string_view::npos) return false;
  std::string_view owner = rest.substr(0, dash);
  const size_t at = owner.find('@');
  if (at != std::string_view::npos) {
    if (owner.substr(at + 1) != this_kernel()) return false;  // made elsewhere: cannot tell
    owner = owner.substr(0, at);
  }
  int64_t p = 0;
  if (!absl::SimpleAtoi(absl::string_view(owner.data(), owner.size()), &p) || p <= 0 || p > INT32_MAX) return false;
  return !alive(static_cast<pid_t>(p));
}

}  // namespace tessera::storage
