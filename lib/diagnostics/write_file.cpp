#include "write_file.hpp"

#include <cerrno>
#include <cstdio>
#include <fstream>

#include "tessera/graph/error.hpp"

namespace tessera::diagnostics::detail {

void write_file(const std::string& path, const std::string& text) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw StorageError(path, "cannot open for writing", errno);
    out << text;
    out.flush();
    if (!out) throw StorageError(path, "cannot write", errno);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int err = errno;
    std::remove(tmp.c_str());
    throw StorageError(path, "cannot rename the temporary file into place", err);
  }
}

}  // namespace tessera::diagnostics::detail
