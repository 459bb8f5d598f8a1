// python/src/module.cpp — the extension module tessera._tessera: one bind_* call per part.
#include <pybind11/pybind11.h>

#include "bindings.hpp"

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "tessera's C++ core: the scheduler behind tessera.get";
  tessera::python::bind_get(m);
  tessera::python::bind_rechunk(m);
  tessera::python::bind_array(m);
  pybind11::module_ array = m.attr("_array");
  tessera::python::bind_dask_bridge(array);
}
