// libFuzzer harness: the `--chunks` parser of `tessera rechunk` (tools/
// chunk_spec.hpp). Every input parses or throws UsageError.
#include <cstdint>
#include <string>

#include "chunk_spec.hpp"
#include "command.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    const auto axes = tessera::tool::parse_chunks(std::string(reinterpret_cast<const char*>(data), size));
    tessera::tool::check_chunks_fit(axes, 2);
  } catch (const tessera::tool::UsageError&) {
  }
  return 0;
}
