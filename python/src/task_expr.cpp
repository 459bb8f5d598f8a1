// python/src/task_expr.cpp — what a converted task's body needs beyond
// evaluate() (task_expr.hpp): the size of a result and how it is held.
#include "task_expr.hpp"

#include <pybind11/numpy.h>

namespace py = pybind11;

namespace tessera::python {
namespace {

// True when `o` is a numpy array; false before numpy is imported (pybind11's
// numpy API would import it). GIL held.
bool is_numpy_array(PyObject* o) {
  static bool numpy_imported = false;
  if (!numpy_imported) {
    if (PyDict_GetItemString(PyImport_GetModuleDict(), "numpy") == nullptr) return false;
    numpy_imported = true;
  }
  return py::detail::npy_api::get().PyArray_Check_(o);
}

// The bytes of the buffer `o` holds (a numpy array, bytes, ...), else 0 (GIL
// held). Without a memory limit results are not measured; this look says which
// are large enough to free at once when their last reader is done. A numpy
// array's size is read off the array: a buffer request would make its format
// string, for every result of a graph of tiny tasks.
size_t buffer_bytes(PyObject* o) {
  if (PyObject_CheckBuffer(o) == 0) return 0;
  if (PyBytes_Check(o)) return static_cast<size_t>(PyBytes_GET_SIZE(o));
  if (is_numpy_array(o)) return static_cast<size_t>(py::reinterpret_borrow<py::array>(o).nbytes());
  Py_buffer view;
  if (PyObject_GetBuffer(o, &view, PyBUF_STRIDES) != 0) {
    PyErr_Clear();
    return 0;
  }
  const auto n = static_cast<size_t>(view.len);
  PyBuffer_Release(&view);
  return n;
}

}  // namespace

int height(const Expr& e) {
  int h = e.sub ? e.sub->height : 0;
  for (const Expr& a : e.args) h = std::max(h, height(a));
  return h + 1;
}

// Wraps the result of the task `key` as the run's policy says.
Value hold_result(PyObject* r, const ResultPolicy& policy, PyObject* key) {
  if (!policy.hold_fn || policy.hold_fn.is_none()) return Value::make<PyValue>(r, size_t{0}, buffer_bytes(r));
  size_t bytes = 0;
  bool spillable = false;
  try {
    const py::tuple held = policy.hold_fn(py::handle(r), py::handle(key));
    bytes = held[1].cast<size_t>();
    spillable = held[2].cast<bool>();
    py::object kept = held[0];
    Py_DECREF(r);
    r = kept.release().ptr();
  } catch (...) {
    Py_DECREF(r);
    throw;
  }
  if (spillable && bytes >= policy.spill_threshold) return Value::make<PySpillable>(r, bytes, size_t{0}, key);
  return Value::make<PyValue>(r, bytes);
}

}  // namespace tessera::python
