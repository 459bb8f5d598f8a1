// python/src/numpy_bridge.hpp — tessera's blocks and dtypes as numpy's, for the parts of the module.
//
// Defined in array.cpp; the GIL must be held.
#pragma once

#include <pybind11/numpy.h>

#include "tessera/array/core/dtype.hpp"
#include "tessera/array/core/ndarray.hpp"

namespace tessera::python {

//! The numpy dtype of `d`.
pybind11::dtype numpy_dtype(array::DType d);
//! The tessera DType of numpy's `d`; TypeError naming it when tessera has none.
array::DType tessera_dtype(const pybind11::dtype& d);
//! A numpy array over `a`'s memory, without a copy (its base holds `a`'s buffer).
pybind11::array to_numpy(const array::NDArray& a);
//! A copy of a numpy array in tessera's memory (C order).
array::NDArray from_numpy_copy(const pybind11::array& in);

}  // namespace tessera::python
