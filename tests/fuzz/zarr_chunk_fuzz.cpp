// libFuzzer harness: one stored chunk or shard read through zarr::Store, the
// input's first byte choosing the store (below) and the rest its chunk file:
// compressed v2 chunks, a chain of two compressors, and v3 shards with their
// index at either end, with and without a checksum. Reading must give the
// chunk or throw tessera::Error, within the bound of its codecs.
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iterator>

#include "fuzz_util.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/graph/error.hpp"

namespace {

struct Kind {
  const char* metadata_file;
  const char* metadata;
  const char* chunk_file;
};

constexpr const char* kV3Head =
    R"({"zarr_format": 3, "node_type": "array", "shape": [16], "data_type": "int32", "fill_value": 0,
        "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [16]}}, "codecs": )";

const Kind kKinds[] = {
    {".zarray", R"({"zarr_format": 2, "shape": [16], "chunks": [16], "dtype": "<i4", "order": "C", "fill_value": 0,
                    "compressor": {"id": "zlib", "level": 1}, "filters": null})", "0"},
    {".zarray", R"({"zarr_format": 2, "shape": [16], "chunks": [16], "dtype": "<i4", "order": "C", "fill_value": 0,
                    "compressor": {"id": "zstd", "level": 3}, "filters": [{"id": "zlib", "level": 1}]})", "0"},
    {"zarr.json", R"([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "zstd", "configuration": {"level": 1}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "crc32c"}],
        "index_location": "end"}}]})", "c/0"},
    {"zarr.json", R"([{"name": "sharding_indexed", "configuration": {"chunk_shape": [4],
        "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
        "index_location": "start"}}]})", "c/0"},
    {"zarr.json", R"([{"name": "bytes", "configuration": {"endian": "little"}}, {"name": "gzip", "configuration": {"level": 1}},
        {"name": "zstd", "configuration": {"level": 3}}]})", "c/0"},
};

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  namespace fs = std::filesystem;
  if (size == 0) return 0;
  const Kind& kind = kKinds[data[0] % std::size(kKinds)];
  const fs::path store = tessera::fuzz::scratch() / "c.zarr";
  fs::remove_all(store);
  fs::create_directories(store / "c");
  std::ofstream(store / kind.metadata_file)
      << (kind.metadata_file == std::string("zarr.json") ? std::string(kV3Head) + kind.metadata : kind.metadata);
  tessera::fuzz::write_file(store / kind.chunk_file, data + 1, size - 1);
  try {
    (void)tessera::array::zarr::open(store.string()).read_chunk({0});
  } catch (const tessera::Error&) {
  }
  return 0;
}
