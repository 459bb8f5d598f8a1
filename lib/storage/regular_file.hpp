// Private: opening a file that must be a regular file. Input paths are
// hostile: a FIFO would block open() until a writer comes (forever), and a
// device such as /dev/zero reads without end. The open is non-blocking, so it
// returns at once whatever the path names, and anything but a regular file is
// refused before a byte is read.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "storage/unique_fd.hpp"

namespace tessera::storage {

//! An open regular file and its size when it was opened.
struct RegularFile {
  UniqueFd file;
  uint64_t size = 0;
};

//! Opens `path` with `flags` (O_RDONLY or O_RDWR; O_NONBLOCK and O_CLOEXEC are
//! added). StorageError naming the path when it cannot be opened or is not a
//! regular file ("expected a regular file, found a FIFO"); nullopt instead when
//! it does not exist and `missing_ok`.
std::optional<RegularFile> open_regular(const std::string& path, int flags, bool missing_ok = false);

}  // namespace tessera::storage
