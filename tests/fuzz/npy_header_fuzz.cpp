// libFuzzer harness: the .npy header parser (npy::parse_header) on arbitrary
// bytes, then read_header on them as a file (the size check at open).
#include <cstddef>
#include <cstdint>

#include "fuzz_util.hpp"
#include "tessera/array/io/npy.hpp"
#include "tessera/graph/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    (void)tessera::array::npy::parse_header(reinterpret_cast<const std::byte*>(data), size, "fuzz.npy");
  } catch (const tessera::Error&) {
  }
  const auto path = tessera::fuzz::scratch() / "a.npy";
  tessera::fuzz::write_file(path, data, size);
  try {
    (void)tessera::array::npy::read_header(path.string());
  } catch (const tessera::Error&) {
  }
  return 0;
}
