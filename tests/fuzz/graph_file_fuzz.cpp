// libFuzzer harness: tessera::load_graph_file on arbitrary bytes. Every input
// must load or throw tessera::Error (or StorageError); nothing else.
#include <cstdint>

#include "fuzz_util.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph_file/graph_file.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const auto path = tessera::fuzz::scratch() / "graph.json";
  tessera::fuzz::write_file(path, data, size);
  try {
    (void)tessera::load_graph_file(path.string());
  } catch (const tessera::Error&) {
  }
  return 0;
}
