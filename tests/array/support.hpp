// Test support for the array suite: temporary folders, running numpy/zarr through
// $TESSERA_PYTHON, and the deterministic values both sides fill arrays with.
#pragma once

#include <doctest/doctest.h>

#include <unistd.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "python_peer.hpp"
#include "tessera/array/core/ndarray.hpp"

namespace tessera::array::testing {

//! A fresh folder under the system's temporary folder, removed with its contents.
class TempDir {
 public:
  TempDir() {
    std::string tmpl = (std::filesystem::temp_directory_path() / "tessera-array-XXXXXX").string();
    REQUIRE(::mkdtemp(tmpl.data()) != nullptr);
    path_ = tmpl;
  }
  ~TempDir() {
    std::error_code ec;
    std::filesystem::remove_all(path_, ec);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;
  //! `name` inside the folder.
  std::string operator/(const std::string& name) const { return (path_ / name).string(); }
  const std::filesystem::path& path() const { return path_; }

 private:
  std::filesystem::path path_;
};

//! Runs `code` with $TESSERA_PYTHON (numpy imported as np) and returns its stdout;
//! fails the test when it exits nonzero.
inline std::string run_python(const TempDir& dir, const std::string& code) {
  const std::string python = python_peer::python();
  const std::string script = dir / "script.py";
  std::ofstream(script) << "import numpy as np\n" << code << "\n";
  const std::string command = python + " " + script + " 2>&1";
  std::string out;
  FILE* pipe = ::popen(command.c_str(), "r");
  REQUIRE(pipe != nullptr);
  std::array<char, 4096> buf;
  size_t n;
  while ((n = std::fread(buf.data(), 1, buf.size(), pipe)) > 0) out.append(buf.data(), n);
  const int status = ::pclose(pipe);
  INFO("python said: " << out);
  REQUIRE(status == 0);
  return out;
}

//! Writes raw bytes to a file.
inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream(path, std::ios::binary) << bytes;
}

//! The value both sides put at C-order position i: i % 97, bools alternate, complex
//! numbers get -(i % 7) as imaginary part. Python's twin is kPythonPattern.
template <class T>
T pattern(int64_t i) {
  if constexpr (std::is_same_v<T, bool>) {
    return i % 2 == 1;
  } else if constexpr (std::is_arithmetic_v<T> || is_floating_v<T>) {
    return static_cast<T>(i % 97);
  } else {
    using R = typename T::value_type;
    return T(static_cast<R>(i % 97), static_cast<R>(-(i % 7)));
  }
}

inline const char* const kPythonPattern = R"(
def pattern(dtype, shape):
    i = np.arange(int(np.prod(shape)), dtype=np.int64)
    dtype = np.dtype(dtype)
    if dtype.kind == 'b':
        v = (i % 2 == 1)
    elif dtype.kind == 'c':
        v = (i % 97) - 1j * (i % 7)
    else:
        v = i % 97
    return v.astype(dtype).reshape(shape)
)";

//! A C-ordered array of `shape` filled with pattern<T>, offset by `start` positions.
inline NDArray pattern_array(DType dtype, const Shape& shape, int64_t start = 0) {
  NDArray out = NDArray::empty(dtype, shape);
  dispatch(dtype, [&]<class T>() {
    T* p = reinterpret_cast<T*>(out.data());
    for (int64_t i = 0; i < out.size(); ++i) p[i] = pattern<T>(start + i);
  });
  return out;
}

}  // namespace tessera::array::testing
