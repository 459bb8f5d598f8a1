// libFuzzer harness: tessera's own HDF5 chunk decoding (lib/array/io/hdf5/filters):
// the input's first byte chooses a filter pipeline (below), the second is the
// chunk's filter mask, the rest its stored bytes. Decoding must give one chunk
// of 256 bytes or throw tessera::Error, never write past it nor take memory
// beyond the pipeline's bound. No libhdf5 call is made: this is what runs
// outside its lock, on bytes a crafted file chooses.
#include <cstddef>
#include <cstdint>
#include <span>
#include <vector>

#include "array/io/hdf5/filters.hpp"
#include "tessera/graph/error.hpp"

namespace {

using tessera::array::hdf5::detail::FilterStep;
using tessera::array::hdf5::detail::Pipeline;

constexpr size_t kChunk = 256;

const std::vector<Pipeline>& pipelines() {
  static const std::vector<Pipeline> all = [] {
    const std::vector<std::vector<FilterStep>> steps = {
        {{1, {4}, ""}},                                // deflate
        {{2, {4}, ""}, {1, {4}, ""}},                  // shuffle, deflate (h5py's usual)
        {{2, {4}, ""}, {1, {4}, ""}, {3, {}, ""}},     // + fletcher32
        {{32000, {}, ""}},                             // lzf
        {{2, {8}, ""}, {32015, {3}, ""}},              // shuffle, zstd
        {{32001, {2, 2, 4, 256, 5, 1, 0}, ""}},        // blosc
        {{2, {4}, ""}, {32000, {}, ""}, {3, {}, ""}},  // shuffle, lzf, fletcher32
    };
    std::vector<Pipeline> p;
    for (const auto& s : steps) p.emplace_back(s, kChunk, 4);
    return p;
  }();
  return all;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  const Pipeline& p = pipelines()[data[0] % pipelines().size()];
  const std::span<const std::byte> stored(reinterpret_cast<const std::byte*>(data + 2), size - 2);
  std::vector<std::byte> out(kChunk);
  try {
    p.decode(stored, data[1], out);
  } catch (const tessera::Error&) {}
  return 0;
}
