#include "array/array_blocks.hpp"

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
