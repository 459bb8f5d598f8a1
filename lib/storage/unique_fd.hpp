// Private: a file descriptor closed when it leaves scope.
#pragma once

#include <unistd.h>

#include <utility>

namespace tessera::storage {

//! Owns `fd` (nothing when negative) and closes it on destruction.
struct UniqueFd {
  int fd = -1;
  explicit UniqueFd(int f) : fd(f) {}
  ~UniqueFd() {
    if (fd >= 0) ::close(fd);
  }
  UniqueFd(UniqueFd&& other) noexcept : fd(std::exchange(other.fd, -1)) {}
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  UniqueFd& operator=(UniqueFd&&) = delete;
};

}  // namespace tessera::storage
