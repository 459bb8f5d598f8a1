// python/src/bindings.hpp — the parts of the extension module `tessera._tessera`.
//
// Each part adds its functions and types to the module in one `bind_*` call;
// module.cpp calls them all.
#pragma once

#include <pybind11/pybind11.h>

namespace tessera::python {

//! tessera.get (a dask scheduler), tessera.order, tessera.cull, tessera.fuse.
void bind_get(pybind11::module_& m);

//! tessera.rechunk (rechunk_path by path) and tessera's exception classes (after bind_get).
void bind_rechunk(pybind11::module_& m);

//! tessera.array: lazy chunked arrays over tessera::array (submodule _tessera._array).
void bind_array(pybind11::module_& m);

//! tessera.array.to_dask / from_dask's C++ halves (_Blocks, _from_graph), in the submodule _array.
void bind_dask_bridge(pybind11::module_& m);

}  // namespace tessera::python
