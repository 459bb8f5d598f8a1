// tessera built without libhdf5 (-Dhdf5=disabled, or no libhdf5-dev): every
// HDF5 entry point says so.
#include "tessera/array/io/hdf5.hpp"
#include "tessera/graph/error.hpp"

namespace tessera::array::hdf5 {
namespace {

[[noreturn]] void unavailable(const std::string& path) {
  throw StorageError(path, "tessera was built without HDF5 support (libhdf5-dev was missing or -Dhdf5=disabled)");
}

}  // namespace

struct Dataset::State {};

const Metadata& Dataset::metadata() const { unavailable(""); }
const Chunks& Dataset::chunks() const { unavailable(""); }
bool Dataset::parallel() const { unavailable(""); }
NDArray Dataset::read_chunk(const std::vector<int64_t>&) const { unavailable(""); }
void Dataset::write_chunk(const std::vector<int64_t>&, const NDArray&) const { unavailable(""); }
void Dataset::close() const { unavailable(""); }
Dataset open(const std::string& path, const std::string&) { unavailable(path); }
Dataset create(const std::string& path, const std::string&, DType, const Shape&, const Shape&, const Format&) {
  unavailable(path);
}
std::vector<Node> walk(const std::string& path) { unavailable(path); }
bool is_hdf5(const std::string&) { return false; }

}  // namespace tessera::array::hdf5
