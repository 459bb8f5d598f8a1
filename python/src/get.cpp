// python/src/get.cpp — tessera.get: dask's scheduler protocol over tessera's C++ scheduler.
#include <pybind11/pybind11.h>

#include "bindings.hpp"
#include "tessera/graph/error.hpp"

namespace py = pybind11;

namespace tessera::python {

void bind_get(py::module_& m) {
  py::register_exception<MemoryLimitError>(m, "MemoryLimitError", PyExc_MemoryError);
}

}  // namespace tessera::python
