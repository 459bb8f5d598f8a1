// python/src/module.cpp — the extension module tessera._tessera: one bind_* call per part,
// then what makes its names read as the public package's (tessera, tessera.array).
#include <pybind11/pybind11.h>

#include "bindings.hpp"

namespace {

// The errors' former names, which shadow builtins: attributes of tessera still
// (code written before keeps working), but not in its __all__.
void keep_former_error_names(pybind11::module_& m) {
  m.attr("TypeError") = m.attr("InvalidTypeError");
  m.attr("ValueError") = m.attr("InvalidValueError");
}

// help(), repr() and pickle name a class by its __module__: the public module's.
void name_public_classes(pybind11::module_& array) { array.attr("Array").attr("__module__") = "tessera.array"; }

}  // namespace

PYBIND11_MODULE(_tessera, m) {
  m.doc() = "tessera's C++ core: the scheduler behind tessera.get";
  tessera::python::bind_get(m);
  tessera::python::bind_rechunk(m);
  tessera::python::bind_array(m);
  pybind11::module_ array = m.attr("_array");
  tessera::python::bind_dask_bridge(array);
  keep_former_error_names(m);
  name_public_classes(array);
}
