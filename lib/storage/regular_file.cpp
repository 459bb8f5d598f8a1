#include "storage/regular_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>

#include <cerrno>

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::storage {
namespace {

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISFIFO(mode)) return "a FIFO";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  return "something else";
}

}  // namespace

std::optional<RegularFile> open_regular(const std::string& path, int flags, bool missing_ok) {
  UniqueFd f{::open(path.c_str(), flags | O_NONBLOCK | O_CLOEXEC)};
  if (f.fd < 0) {
    if (errno == ENOENT && missing_ok) return std::nullopt;
    throw StorageError(path, "cannot open", errno);
  }
  struct stat st {};
  if (::fstat(f.fd, &st) != 0) throw StorageError(path, "cannot stat", errno);
  if (!S_ISREG(st.st_mode))
    throw StorageError(path, absl::StrCat("expected a regular file, found ", kind_of(st.st_mode)));
  return RegularFile{std::move(f), static_cast<uint64_t>(st.st_size)};
}

}  // namespace tessera::storage
