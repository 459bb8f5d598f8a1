#include "array_blocks.hpp"

#include <absl/strings/str_cat.h>

#include "tessera/graph/error.hpp"

namespace tessera::array {

const NDArray& block_value(const Value& v, const std::string& what) {
  if (!v.is<NDArray>()) {
    throw TypeError(absl::StrCat(what, ": expected an NDArray block, found a value of type ",
                                 v.type_name()));
  }
  return v.as<NDArray>();
}

NDArray assemble(const Chunks& chunks, DType dtype, const std::vector<Value>& blocks) {
  if (blocks.size() == 1) {
    const NDArray& b = block_value(blocks[0], "compute");
    check_block(b, chunks.shape(), dtype, Key("compute"), "assemble");
    return b.is_c_contiguous() ? b : b.copy();
  }
  NDArray out = NDArray::empty(dtype, chunks.shape());
  size_t i = 0;
  for_each_block(chunks, [&](absl::Span<const int64_t> index) {
    std::vector<int64_t> block(index.begin(), index.end());
    Shape offset = chunks.block_offset(block);
    Shape shape = chunks.block_shape(block);
    std::vector<Slice> region;
    for (size_t axis = 0; axis < block.size(); ++axis) {
      region.push_back(Slice{offset[axis], offset[axis] + shape[axis], 1});
    }
    out.slice(region).assign(block_value(blocks[i++], "compute"));
  });
  return out;
}

Scalar element_scalar(const NDArray& a) {
  NDArray c = a.is_c_contiguous() ? a : a.copy();
  return dispatch(a.dtype(), [&]<class T>() { return Scalar(*reinterpret_cast<const T*>(c.data())); });
}

void check_block(const NDArray& block, const Shape& shape, DType dtype, const Key& key,
                 const std::string& function) {
  if (block.shape() != shape || block.dtype() != dtype) {
    throw ChunkError(absl::StrCat(function, " made block ", key.str(), " as a ", block.describe(),
                                  ", expected a ", std::string(dtype.name()), " array of shape ", shape_str(shape)));
  }
}

}  // namespace tessera::array
