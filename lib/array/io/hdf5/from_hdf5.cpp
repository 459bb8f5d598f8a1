// from_hdf5 and from_netcdf: one task per block, each reading its chunk's
// bytes under libhdf5's lock and decoding them outside it (dataset.cpp).
#include <absl/strings/str_cat.h>

#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"

namespace tessera::array {
namespace {

Array dataset_array(const hdf5::Dataset& dataset, const char* what) {
  auto d = std::make_shared<const hdf5::Dataset>(dataset);
  Chunks c = d->chunks();
  const std::string name = absl::StrCat(what, "-", unique_token());  // a file changes without its name changing
  Graph layer;
  for_each_block(c, [&](std::span<const int64_t> idx) {
    auto f = [d, block = std::vector<int64_t>(idx.begin(), idx.end())] { return d->read_chunk(block); };
    layer.put(Key(name, idx), Task(fn(what, std::move(f))));
  });
  auto fill = [d](std::span<const int64_t> idx, const NDArray& out) {
    out.assign(d->read_chunk(std::vector<int64_t>(idx.begin(), idx.end())));
  };
  return Array(name, std::move(c), d->metadata().dtype, std::move(layer), std::move(fill));
}

}  // namespace

Array from_hdf5(const std::string& path, const std::string& dataset) {
  return dataset_array(hdf5::open(path, dataset), "from_hdf5");
}

Array from_hdf5(const std::string& path, const std::string& dataset, const ChunkSpec& chunks) {
  Array x = from_hdf5(path, dataset);
  return rechunk(x, normalize_chunks(chunks, x.shape(), x.dtype()));
}

Array from_netcdf(const std::string& path, const std::string& variable) {
  hdf5::Dataset d = hdf5::open(path, variable);
  if (d.metadata().dimension_without_values) {
    throw StorageError(path, absl::StrCat(d.metadata().path, " is a dimension without values, not a variable"));
  }
  return dataset_array(d, "from_netcdf");
}

}  // namespace tessera::array
