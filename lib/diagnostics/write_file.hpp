// Writing a whole text file for the diagnostics, with StorageError on failure.
#pragma once

#include <string>

namespace tessera::diagnostics::detail {

//! Writes `text` to `path` (through a temporary name, renamed on success).
void write_file(const std::string& path, const std::string& text);

//! StorageError unless write_file could write `path` now.
void check_writable(const std::string& path);

}  // namespace tessera::diagnostics::detail
