// libFuzzer harness: the Python-literal parser of .npy headers
// (lib/array/io/py_literal.hpp) on arbitrary text.
#include <cstdint>
#include <string_view>

#include "array/io/py_literal.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tessera::array::detail::parse_py_literal(std::string_view(reinterpret_cast<const char*>(data), size));
  } catch (const tessera::array::detail::LiteralError&) {
  }
  return 0;
}
