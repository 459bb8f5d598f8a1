// tests/fuzz/fuzz_util.hpp — what the libFuzzer harnesses share: a private
// temporary folder per process, and the rule that tessera's documented errors
// are fine (a clear error is the right answer to bad input) while anything
// else (a crash, a sanitizer report, an undocumented exception) is a finding.
#pragma once

#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

namespace tessera::fuzz {

//! A folder of this process's own under $TMPDIR, removed at exit.
inline const std::filesystem::path& scratch() {
  static const std::filesystem::path dir = [] {
    auto p = std::filesystem::temp_directory_path() / ("tessera-fuzz-" + std::to_string(::getpid()));
    std::filesystem::create_directories(p);
    std::atexit([] { std::filesystem::remove_all(std::filesystem::temp_directory_path() /
                                                  ("tessera-fuzz-" + std::to_string(::getpid()))); });
    return p;
  }();
  return dir;
}

inline void write_file(const std::filesystem::path& p, const uint8_t* data, size_t size) {
  std::ofstream(p, std::ios::binary | std::ios::trunc).write(reinterpret_cast<const char*>(data),
                                                              static_cast<std::streamsize>(size));
}

}  // namespace tessera::fuzz
