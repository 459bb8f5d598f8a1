// NDArray's Spillable form: a header (a tag, the dtype, the shape), padding to
// 64 bytes, then the elements in C order — where a mapping of the file can serve
// them in place, aligned for Eigen.
#include <absl/strings/str_cat.h>

#include "tessera/array/core/ndarray.hpp"
#include "tessera/graph/error.hpp"

namespace tessera {
namespace {

constexpr uint32_t kTag = 0x414e5354;  // "TSNA"
constexpr size_t kAlign = 64;

}  // namespace

void Spillable<array::NDArray>::serialize(const array::NDArray& a, SpillWriter& w) {
  w.put(kTag);
  w.put(static_cast<uint32_t>(a.dtype().id()));
  w.put(static_cast<uint32_t>(a.ndim()));
  for (int64_t n : a.shape()) w.put(n);
  w.align(kAlign);
  // The elements in C order, kept alive by their buffer: a message to another
  // process sends them from there (PartsWriter), a file copies them.
  const array::NDArray c = a.is_c_contiguous() ? a : a.copy();
  w.write_shared(std::shared_ptr<const std::byte>(c.buffer().shared(), c.data()), c.nbytes());
}

array::NDArray Spillable<array::NDArray>::deserialize(SpillReader& r) {
  const auto tag = r.get<uint32_t>();
  const auto id = r.get<uint32_t>();
  const auto ndim = r.get<uint32_t>();
  if (tag != kTag || id >= static_cast<uint32_t>(array::DType::count) || ndim > 64) {
    throw Error(absl::StrCat("a spilled array's header is damaged: expected tag ", kTag, ", a dtype below ",
                             array::DType::count, " and at most 64 axes, found ", tag, ", ", id, ", ", ndim));
  }
  const array::DType dtype(static_cast<array::DType::Id>(id));
  array::Shape shape(ndim);
  for (auto& n : shape) n = r.get<int64_t>();
  const size_t nbytes = array::array_nbytes(dtype, shape);
  r.align(kAlign);
  std::shared_ptr<const std::byte> bytes = r.map(nbytes);
  array::Buffer buffer(std::const_pointer_cast<std::byte>(std::move(bytes)), nbytes, /*writable=*/false);
  return array::NDArray(std::move(buffer), dtype, shape, array::NDArray::c_strides(shape, dtype.itemsize()), 0);
}

}  // namespace tessera
