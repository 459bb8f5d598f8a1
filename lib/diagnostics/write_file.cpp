#include "write_file.hpp"

#include "storage/publish.hpp"

namespace tessera::diagnostics::detail {

void write_file(const std::string& path, const std::string& text) { storage::publish_bytes(path, text); }

void check_writable(const std::string& path) { storage::check_writable(path); }

}  // namespace tessera::diagnostics::detail
