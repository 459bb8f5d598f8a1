#include "tessera/graph/spill.hpp"

#include <cstring>

#include <absl/strings/str_cat.h>

#include "base/padding.hpp"
#include "tessera/graph/error.hpp"

namespace tessera {

void SpillReader::expect(uint64_t count, size_t item_size) const {
  const size_t left = remaining();
  if (item_size != 0 && count > left / item_size) {
    throw Error(absl::StrCat("a serialized value is damaged: it announces ", count, " items of ", item_size,
                             " bytes, but only ", left, " bytes are left"));
  }
}

void BytesWriter::write(const void* data, size_t size) {
  const auto* p = static_cast<const std::byte*>(data);
  bytes_.insert(bytes_.end(), p, p + size);
}

void BytesWriter::align(size_t alignment) {
  bytes_.resize(bytes_.size() + base::padding_to(alignment, bytes_.size()), std::byte{0});
}

std::vector<std::byte>& PartsWriter::open_part() {
  if (!open_) open_ = std::make_shared<std::vector<std::byte>>();
  return *open_;
}

void PartsWriter::write(const void* data, size_t size) {
  if (size == 0) return;
  const auto* p = static_cast<const std::byte*>(data);
  std::vector<std::byte>& part = open_part();
  part.insert(part.end(), p, p + size);
  size_ += size;
}

void PartsWriter::align(size_t alignment) {
  const size_t padding = base::padding_to(alignment, size_);
  if (padding == 0) return;
  std::vector<std::byte>& part = open_part();
  part.resize(part.size() + padding, std::byte{0});
  size_ += padding;
}

void PartsWriter::write_shared(std::shared_ptr<const std::byte> data, size_t size) {
  if (size < kMinShared) {
    write(data.get(), size);
    return;
  }
  close();
  parts_.push_back({std::move(data), size});
  size_ += size;
}

const std::vector<SharedBytes>& PartsWriter::parts() {
  close();
  return parts_;
}

void PartsWriter::close() {
  if (!open_) return;
  const std::byte* first = open_->data();
  const size_t n = open_->size();
  parts_.push_back({std::shared_ptr<const std::byte>(std::move(open_), first), n});
  open_.reset();
}

BytesReader::BytesReader(std::shared_ptr<const std::byte> data, size_t size, std::string what)
    : data_(std::move(data)), size_(size), what_(std::move(what)) {}

void BytesReader::read(void* data, size_t size) {
  const std::byte* p = take(size);
  if (size > 0) std::memcpy(data, p, size);
}

void BytesReader::align(size_t alignment) { take(base::padding_to(alignment, pos_)); }

std::shared_ptr<const std::byte> BytesReader::map(size_t size) {
  const std::byte* p = take(size);
  return std::shared_ptr<const std::byte>(data_, p);
}

const std::byte* BytesReader::take(size_t n) {
  if (n > size_ - pos_) {
    throw Error(absl::StrCat(what_, " ends at byte ", size_, ", ", n, " more asked at ", pos_));
  }
  const std::byte* p = data_.get() + pos_;
  pos_ += n;
  return p;
}

}  // namespace tessera
