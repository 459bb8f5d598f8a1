// The write discipline of publish.hpp. Renames and syncs are plain POSIX and
// Linux calls so that every step can say which path failed and why.
#include "storage/publish.hpp"

#include <fcntl.h>
#include <stdio.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <random>
#include <system_error>

#include <absl/strings/match.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/str_format.h>
#include <absl/strings/str_split.h>

#include "storage/owner.hpp"
#include "storage/unique_fd.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::storage {
namespace {

namespace fs = std::filesystem;

constexpr std::string_view kAsideMarker = ".tessera-old-";
constexpr unsigned kNoReplace = 1;  // RENAME_NOREPLACE
constexpr unsigned kExchange = 2;   // RENAME_EXCHANGE

int rename2(const std::string& from, const std::string& to, unsigned flags) {
  return static_cast<int>(::syscall(SYS_renameat2, AT_FDCWD, from.c_str(), AT_FDCWD, to.c_str(), flags));
}

// "out.zarr/" (as shell completion writes it) names out.zarr, whose folder is
// ".", not out.zarr itself: every entry point strips the trailing slashes first.
std::string normal(const std::string& path) {
  const size_t end = path.find_last_not_of('/');
  return end == std::string::npos ? path.substr(0, 1) : path.substr(0, end + 1);
}

fs::path folder_of(const std::string& path) {
  fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? fs::path(".") : parent;
}

std::string base_of(const std::string& path) {
  std::string base = fs::path(path).filename().string();
  if (base.empty()) base = fs::path(path).parent_path().filename().string();  // "out/"
  return base;
}

// `.<base><marker>` followed by `<owner>-<random>` (owner.hpp).
std::string sibling(const std::string& path, std::string_view marker) {
  static thread_local std::mt19937_64 rng(std::random_device{}() ^ (static_cast<uint64_t>(::getpid()) << 32));
  return (folder_of(path) / absl::StrFormat(".%s%s%s-%016x", base_of(path), marker, owner_field(), rng())).string();
}

// A short, quoted rendering of a path read from a directory (names may be long).
std::string quoted(const std::string& name) {
  if (name.size() <= 80) return "'" + name + "'";
  return "'" + name.substr(0, 77) + "...'";
}

bool is_digits(absl::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

// A chunk key component: "0", "0.1.2", "c", "c.0.1" (zarr v2 and v3 encodings).
bool is_chunk_name(absl::string_view s) {
  if (s == "c") return true;
  if (absl::StartsWith(s, "c.")) s.remove_prefix(2);
  for (absl::string_view part : absl::StrSplit(s, '.')) {
    if (!is_digits(part)) return false;
  }
  return true;
}

// Empty when `dir` is a zarr array directory; otherwise what disqualifies it.
std::string zarr_problem(const fs::path& dir) {
  std::error_code ec;
  if (fs::is_empty(dir, ec) && !ec) return {};  // nothing in it to lose
  const bool v2 = fs::is_regular_file(fs::symlink_status(dir / ".zarray", ec));
  const bool v3 = fs::is_regular_file(fs::symlink_status(dir / "zarr.json", ec));
  if (!v2 && !v3) return "a directory without .zarray or zarr.json (not a zarr array)";
  fs::recursive_directory_iterator it(dir, fs::directory_options::none, ec), end;
  if (ec) return "a directory that cannot be listed: " + ec.message();
  for (; it != end; it.increment(ec)) {
    if (ec) return "a directory that cannot be listed: " + ec.message();
    const fs::path rel = it->path().lexically_relative(dir);
    const std::string name = it->path().filename().string();
    const fs::file_status st = it->symlink_status(ec);
    if (it.depth() == 0 && (name == ".zarray" || name == ".zattrs" || name == "zarr.json") &&
        fs::is_regular_file(st)) {
      continue;
    }
    if (!is_chunk_name(name)) {
      return absl::StrCat("a directory holding ", quoted(rel.string()), ", which is not part of a zarr array");
    }
    if (fs::is_symlink(st)) return absl::StrCat("a directory holding the symbolic link ", quoted(rel.string()));
    if (!fs::is_regular_file(st) && !fs::is_directory(st)) {
      return absl::StrCat("a directory holding ", quoted(rel.string()), ", which is not a regular file");
    }
  }
  return {};
}

// "" when the file at `path` starts with `magic`; what it is otherwise.
std::string magic_problem(const std::string& path, std::string_view magic, const char* kind) {
  char head[16] = {};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOFOLLOW);
  if (fd < 0) return absl::StrCat("a file that cannot be opened (", std::strerror(errno), ")");
  const ssize_t n = ::pread(fd, head, magic.size(), 0);
  ::close(fd);
  if (n != static_cast<ssize_t>(magic.size()) || std::memcmp(head, magic.data(), magic.size()) != 0) {
    return absl::StrCat("a file that is not ", kind);
  }
  return {};
}

// Whether `outer` is `inner` or one of its folders (both canonical).
bool holds(const fs::path& outer, const fs::path& inner) {
  auto o = outer.begin(), i = inner.begin();
  for (; o != outer.end(); ++o, ++i) {
    if (o->empty()) continue;  // a trailing separator
    if (i == inner.end() || *o != *i) return false;
  }
  return true;
}

std::string kind_name(Kind kind) {
  switch (kind) {
    case Kind::npy: return "a .npy file";
    case Kind::hdf5: return "an HDF5 file";
    case Kind::zarr: return "a zarr array (.zarray or zarr.json and chunk files) or an empty directory";
    case Kind::file: return "a regular file";
  }
  return "";
}

void refuse(const std::string& path, const Kind kind, const std::string& found) {
  throw StorageError(path, absl::StrCat("will not replace it: it is ", found, "; tessera replaces only ",
                                        kind_name(kind), " here"));
}

// fsyncs `path` (a file or a directory).
void sync_one(const fs::path& path, bool directory) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | (directory ? O_DIRECTORY : 0));
  if (fd < 0) throw StorageError(path.string(), "cannot open to sync it to the disk", errno);
  const int rc = ::fsync(fd);
  const int err = errno;
  ::close(fd);
  if (rc != 0 && err != EINVAL) throw StorageError(path.string(), "cannot sync to the disk", err);
}

// A descriptor of an output's folder, opened before the output is written, so
// that syncfs on it reports the write-back errors its file system met since
// (Linux 5.8 and later). Negative when the folder could not be opened then.
UniqueFd watch_folder(const fs::path& folder) {
  return UniqueFd(::open(folder.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
}

// Syncs a new output to the disk: a file by fsync, a folder (a zarr store:
// hundreds or thousands of chunk files and folders) by one syncfs of its file
// system. An fsync per file and folder costs a flush of the disk's cache each,
// even when the data is already written (the chunk writers start it early), and
// those flushes, one after another, were a large part of writing a store of
// small chunks; one syncfs writes what is left and flushes once. The price: it
// also writes what other processes left dirty on that file system.
void sync_tree(const std::string& path, const UniqueFd& watch) {
  std::error_code ec;
  if (!fs::is_directory(fs::symlink_status(path, ec))) return sync_one(path, false);
  const UniqueFd own(watch.fd >= 0 ? -1 : ::open(path.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
  const int fd = watch.fd >= 0 ? watch.fd : own.fd;
  if (fd < 0) throw StorageError(path, "cannot open to sync it to the disk", errno);
  if (::syncfs(fd) != 0) {
    const int err = errno;
    throw StorageError(path, "cannot sync to the disk", err);
  }
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  fs::remove_all(path, ec);  // never follows symbolic links
}

// Publishes the finished `tmp` at `path`.
void replace(const std::string& tmp, const std::string& path, bool exists) {
  if (!exists) {
    if (rename2(tmp, path, kNoReplace) == 0) return;
    if (errno == EEXIST) throw StorageError(path, "appeared while tessera was writing it; left as it is");
    if (errno != EINVAL && errno != ENOSYS) throw StorageError(path, "cannot rename " + tmp + " to it", errno);
    if (::rename(tmp.c_str(), path.c_str()) != 0) throw StorageError(path, "cannot rename " + tmp + " to it", errno);
    return;
  }
  if (rename2(tmp, path, kExchange) == 0) {
    remove_tree(tmp);  // the old output, now under the temporary name
    return;
  }
  if (errno != EINVAL && errno != ENOSYS) throw StorageError(path, "cannot exchange it with " + tmp, errno);
  // No exchange on this file system: the old output steps aside first.
  const std::string aside = sibling(path, kAsideMarker);
  if (::rename(path.c_str(), aside.c_str()) != 0) throw StorageError(path, "cannot rename it aside", errno);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    ::rename(aside.c_str(), path.c_str());
    throw StorageError(path, "cannot rename " + tmp + " to it", err);
  }
  remove_tree(aside);
}

}  // namespace

std::string temporary_path(const std::string& path) { return sibling(normal(path), kTemporaryMarker); }

void check_target(const std::string& given, const PublishOptions& options) {
  const std::string path = normal(given);
  std::error_code ec;
  const fs::file_status st = fs::symlink_status(path, ec);
  if (!fs::exists(st)) return;
  if (!options.overwrite) throw StorageError(path, "the target exists; pass overwrite to replace it");
  const fs::path canonical = fs::weakly_canonical(fs::absolute(path), ec);
  if (holds(canonical, fs::current_path(ec))) {
    refuse(path, options.kind,
           fs::equivalent(canonical, fs::current_path(), ec) ? "the working directory"
                                                             : "a folder holding the working directory");
  }
  for (const std::string& p : options.protect) {
    const fs::path other = fs::weakly_canonical(fs::absolute(p), ec);
    if (holds(canonical, other)) {
      refuse(path, options.kind, canonical == other ? "the source " + quoted(p) : "a folder holding " + quoted(p));
    }
  }
  if (fs::is_symlink(st)) refuse(path, options.kind, "a symbolic link");
  std::string problem;
  switch (options.kind) {
    case Kind::npy:
      problem = fs::is_regular_file(st) ? magic_problem(path, "\x93NUMPY", "a .npy file") : "not a regular file";
      break;
    case Kind::hdf5:
      problem = fs::is_regular_file(st) ? magic_problem(path, std::string_view("\x89HDF\r\n\x1a\n", 8), "an HDF5 file")
                                        : "not a regular file";
      break;
    case Kind::zarr:
      problem = fs::is_directory(st) ? zarr_problem(path) : "not a directory";
      break;
    case Kind::file:
      if (!fs::is_regular_file(st)) problem = "not a regular file";
      break;
  }
  if (!problem.empty()) refuse(path, options.kind, problem);
}

std::vector<std::string> clean_stale(const std::string& given) {
  const std::string path = normal(given);
  std::vector<std::string> done;
  std::error_code ec;
  const std::string prefix = absl::StrCat(".", base_of(path));
  for (const auto& entry : fs::directory_iterator(folder_of(path), ec)) {
    const std::string name = entry.path().filename().string();
    if (!absl::StartsWith(name, prefix)) continue;
    absl::string_view rest = absl::string_view(name).substr(prefix.size());
    const bool tmp = absl::ConsumePrefix(&rest, absl::string_view(kTemporaryMarker.data(), kTemporaryMarker.size()));
    if (!tmp && !absl::ConsumePrefix(&rest, absl::string_view(kAsideMarker.data(), kAsideMarker.size()))) continue;
    if (!owner_gone(std::string_view(rest.data(), rest.size()))) continue;
    const std::string stale = entry.path().string();
    if (!tmp && !fs::exists(fs::symlink_status(path, ec)) && ::rename(stale.c_str(), path.c_str()) == 0) {
      done.push_back(absl::StrCat("put back ", stale, " (the output before an interrupted overwrite) as ", path));
      continue;
    }
    remove_tree(stale);
    done.push_back(absl::StrCat("removed ", stale, tmp ? " (a temporary of an interrupted run)"
                                                       : " (an output an interrupted run had replaced)"));
  }
  return done;
}

void publish(const std::string& given, const PublishOptions& options,
             absl::FunctionRef<void(const std::string& tmp)> write) {
  const std::string path = normal(given);
  clean_stale(path);
  check_target(path, options);
  std::error_code ec;
  const bool exists = fs::exists(fs::symlink_status(path, ec));
  const std::string tmp = temporary_path(path);
  const UniqueFd watch = watch_folder(folder_of(path));
  try {
    write(tmp);
    sync_tree(tmp, watch);
    replace(tmp, path, exists);
  } catch (...) {
    remove_tree(tmp);  // nothing left behind; the original error matters more
    throw;
  }
  sync_one(folder_of(path), true);
}

void sync_output(const std::string& path) { sync_tree(path, UniqueFd(-1)); }

void check_writable(const std::string& path) {
  check_target(path, {.kind = Kind::file, .overwrite = true});
  const std::string tmp = temporary_path(path);
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
  if (fd < 0) throw StorageError(path, "cannot make a file in its folder", errno);
  ::close(fd);
  ::unlink(tmp.c_str());
}

void publish_bytes(const std::string& path, std::string_view bytes) {
  publish(path, {.kind = Kind::file, .overwrite = true}, [&](const std::string& tmp) {
    const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644);
    if (fd < 0) throw StorageError(path, "cannot open for writing", errno);
    const char* p = bytes.data();
    size_t left = bytes.size();
    while (left > 0) {
      const ssize_t n = ::write(fd, p, left);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        const int err = errno;
        ::close(fd);
        throw StorageError(path, absl::StrCat("cannot write ", bytes.size(), " bytes to ", tmp), err);
      }
      p += n;
      left -= static_cast<size_t>(n);
    }
    if (::close(fd) != 0) throw StorageError(path, "cannot write " + tmp, errno);
  });
}

}  // namespace tessera::storage
