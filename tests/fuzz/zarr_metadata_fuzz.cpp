// libFuzzer harness: zarr metadata through the public from_zarr, on a store
// folder whose .zarray (v2) or zarr.json (v3, when the first byte is odd) holds
// the input. Opening is lazy, so only metadata is read: it must open or throw
// tessera::Error.
#include <cstdint>
#include <filesystem>

#include "fuzz_util.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/graph/error.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  const fs::path store = tessera::fuzz::scratch() / "a.zarr";
  fs::remove_all(store);
  fs::create_directories(store);
  const bool v3 = size > 0 && (data[0] & 1) != 0;
  if (size > 0) ++data, --size;
  tessera::fuzz::write_file(store / (v3 ? "zarr.json" : ".zarray"), data, size);
  try {
    (void)tessera::array::from_zarr(store.string());
  } catch (const tessera::Error&) {
  }
  return 0;
}
