#include "spill_store.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string_view>

#include <absl/strings/numbers.h>
#include <absl/strings/str_cat.h>
#include <absl/strings/strip.h>

#include "storage/owner.hpp"
#include "base/padding.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::detail {
namespace {

constexpr size_t kPage = 4096;
// Room beyond the value's own bytes: headers and the padding before mapped data.
constexpr uint64_t kSlack = 2 * kPage;

// Buffers small writes; large ones go straight to the file.
class FileWriter final : public SpillWriter {
 public:
  FileWriter(int fd, const std::string& path) : fd_(fd), path_(path) { buf_.reserve(kBuffer); }
  void write(const void* data, size_t size) override {
    const auto* p = static_cast<const std::byte*>(data);
    if (buf_.size() + size > kBuffer) flush();
    if (size >= kBuffer) {
      write_all(p, size);
    } else {
      buf_.insert(buf_.end(), p, p + size);
    }
    pos_ += size;
  }
  void align(size_t alignment) override {
    static const std::byte zeros[kPage] = {};
    write(zeros, base::padding_to(alignment, pos_));
  }
  uint64_t finish() {
    flush();
    return pos_;
  }

 private:
  static constexpr size_t kBuffer = 1 << 20;
  void flush() {
    write_all(buf_.data(), buf_.size());
    buf_.clear();
  }
  void write_all(const std::byte* p, size_t n) {
    while (n > 0) {
      const ssize_t k = ::write(fd_, p, n);
      if (k < 0 && errno == EINTR) continue;
      if (k < 0) throw StorageError(path_, "cannot write a spilled result", errno);
      p += k;
      n -= static_cast<size_t>(k);
    }
  }
  int fd_;
  const std::string& path_;
  std::vector<std::byte> buf_;
  uint64_t pos_ = 0;
};

// The file mapped whole, read by a BytesReader whose map() hands out pieces of
// that mapping. Copy-on-write (MAP_PRIVATE): a reloaded block is writable as it
// was before it spilled, and a write to it copies that page, never the file.
BytesReader map_spilled(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) throw StorageError(path, "cannot open a spilled result", errno);
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int err = errno;
    ::close(fd);
    throw StorageError(path, "cannot stat a spilled result", err);
  }
  const auto size = static_cast<size_t>(st.st_size);
  std::shared_ptr<const std::byte> map;
  if (size > 0) {
    void* p = ::mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE, fd, 0);
    const int err = errno;
    ::close(fd);
    if (p == MAP_FAILED) throw StorageError(path, absl::StrCat("cannot map ", size, " bytes"), err);
    map = std::shared_ptr<const std::byte>(static_cast<const std::byte*>(p),
                                           [size](const std::byte* q) { ::munmap(const_cast<std::byte*>(q), size); });
  } else {
    ::close(fd);
  }
  return BytesReader(std::move(map), size, absl::StrCat("the spilled result ", path));
}

constexpr char kFolderPrefix[] = "tessera-spill-";

// Removes the files a SpillStore writes (`<n>.spill`) from `folder`, then the
// folder; anything else in it stays, and so does the folder then.
void remove_folder(const std::string& folder) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(folder, ec)) {
    const std::string name = entry.path().filename().string();
    absl::string_view id = name;
    uint64_t n = 0;
    if (!absl::ConsumeSuffix(&id, ".spill") || !absl::SimpleAtoi(id, &n)) continue;
    if (fs::is_regular_file(entry.symlink_status(ec))) ::unlink(entry.path().c_str());
  }
  ::rmdir(folder.c_str());
}

// Removes the folders of killed runs in `parent` (see spill_store.hpp).
void remove_stale_folders(const std::string& parent) {
  namespace fs = std::filesystem;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(parent, ec)) {
    const std::string name = entry.path().filename().string();
    absl::string_view rest = name;
    if (!absl::ConsumePrefix(&rest, kFolderPrefix) ||
        !storage::owner_gone(std::string_view(rest.data(), rest.size()))) {
      continue;
    }
    if (fs::is_directory(entry.symlink_status(ec))) remove_folder(entry.path().string());
  }
}

}  // namespace

SpillStore::SpillStore(std::string parent, uint64_t disk_limit)
    : parent_(std::move(parent)), disk_limit_(disk_limit) {
  if (parent_.empty()) {
    const char* tmp = std::getenv("TMPDIR");
    parent_ = tmp != nullptr && *tmp != '\0' ? tmp : "/tmp";
  }
}

SpillStore::~SpillStore() {
  if (!folder_.empty()) remove_folder(folder_);
}

std::string SpillStore::path(int64_t id) const { return absl::StrCat(folder_, "/", id, ".spill"); }

std::string SpillStore::folder() const {
  std::lock_guard lk(mu_);
  return folder_;
}

void SpillStore::make_folder() {
  remove_stale_folders(parent_);  // the space is wanted now
  std::string templ = absl::StrCat(parent_, "/", kFolderPrefix, storage::owner_field(), "-XXXXXX");
  if (::mkdtemp(templ.data()) == nullptr) {
    throw StorageError(parent_, "cannot make a scratch folder for spilled results", errno);
  }
  folder_ = std::move(templ);
}

int64_t SpillStore::put(const Value& v, uint64_t& written) {
  const uint64_t reserve = v.nbytes() + kSlack;
  int64_t id;
  {
    std::lock_guard lk(mu_);
    if (reserve > disk_limit_ - std::min(used_, disk_limit_)) return -1;
    if (folder_.empty()) make_folder();
    used_ += reserve;
    id = static_cast<int64_t>(sizes_.size());
    sizes_.push_back(reserve);
    live_.push_back(1);
  }
  const std::string p = path(id);
  try {
    const int fd = ::open(p.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
    if (fd < 0) throw StorageError(p, "cannot create a file for a spilled result", errno);
    try {
      FileWriter w(fd, p);
      v.spill(w);
      written = w.finish();
    } catch (...) {
      ::close(fd);
      throw;
    }
    if (::close(fd) != 0) throw StorageError(p, "cannot write a spilled result", errno);
  } catch (...) {
    drop(id);
    throw;
  }
  std::lock_guard lk(mu_);
  used_ = used_ - sizes_[static_cast<size_t>(id)] + written;
  sizes_[static_cast<size_t>(id)] = written;
  return id;
}

Value SpillStore::get(int64_t id, detail::Reload reload) const {
  const std::string p = path(id);
  BytesReader r = map_spilled(p);
  return reload(r);
}

void SpillStore::drop(int64_t id) {
  const auto i = static_cast<size_t>(id);
  {
    std::lock_guard lk(mu_);
    if (!live_[i]) return;
    live_[i] = 0;
    used_ -= sizes_[i];
  }
  ::unlink(path(id).c_str());
}

}  // namespace tessera::detail
