// Private: publishing a new store target under its final name.
#pragma once

#include <string>

#include <absl/functional/function_ref.h>

namespace tessera::array {

//! Runs `write(tmp)` to make a new target at a temporary path `tmp` next to
//! `path`, then renames it to `path`. StorageError when `path` exists and not
//! `overwrite`; on any error `tmp` is removed and `path` left as it was.
void write_target(const std::string& path, bool overwrite, absl::FunctionRef<void(const std::string& tmp)> write);

}  // namespace tessera::array
