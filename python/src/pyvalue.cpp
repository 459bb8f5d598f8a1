// python/src/pyvalue.cpp — releasing and spilling Python objects held by Values.
#include "pyvalue.hpp"

#include <pybind11/pybind11.h>

#include <atomic>
#include <cstdint>
#include <mutex>
#include <memory>
#include <string>
#include <vector>

#include "mapped_buffer.hpp"
#include "tessera/graph/not_spillable.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {
// A mapped buffer starts at a page boundary of the scratch file.
constexpr size_t kBufferAlignment = 4096;
}  // namespace

namespace {
// References dropped by threads without the GIL, released by the next thread
// that holds it (release_deferred): a worker that finishes a task would
// otherwise take the GIL a second time, after the task's body, only to drop the
// inputs it was the last reader of.
// It also takes the thread states of exited worker threads (keep_thread_state):
// deleting one needs the GIL, which a thread must not wait for while it exits
// (during finalization Python ends a thread that waits for it, and a thread
// ending inside its exit handlers is std::terminate).
struct Deferred {
  std::mutex lock;
  std::vector<PyObject*> objects;
  std::vector<PyThreadState*> exited;
  std::atomic<size_t> size{0};  // objects.size() + exited.size()
};
Deferred& deferred() {
  static auto* d = new Deferred;  // never destroyed: threads may drop references during exit
  return *d;
}
// Past this many the dropping thread takes the GIL itself, so that references
// dropped outside a run (where no task body follows) are not held for long.
constexpr size_t kDeferredLimit = 256;
// Results this large (under a memory limit as measured, else by their buffer) are
// dropped at once: a worker that has no next task would otherwise keep them
// until some task body starts, and one that has a next task frees them a task
// body's GIL wait later.
constexpr size_t kDeferredBytes = 65536;
}  // namespace

void release_deferred() noexcept {
  Deferred& d = deferred();
  if (d.size.load(std::memory_order_relaxed) == 0) return;
  std::vector<PyObject*> objects;
  std::vector<PyThreadState*> exited;
  {
    std::lock_guard<std::mutex> g(d.lock);
    objects.swap(d.objects);
    exited.swap(d.exited);
    d.size.store(0, std::memory_order_relaxed);
  }
  // Outside the lock: a __del__ may drop more references.
  for (PyObject* o : objects) Py_DECREF(o);
  for (PyThreadState* t : exited) {
    PyThreadState_Clear(t);
    PyThreadState_Delete(t);
  }
}

namespace {
bool finalizing() noexcept {
#if PY_VERSION_HEX >= 0x030D0000
  return Py_IsFinalizing() != 0;
#else
  return _Py_IsFinalizing() != 0;
#endif
}

// The thread state keep_thread_state gave this thread: when the thread exits it
// goes to Deferred::exited, deleted by the next release_deferred (once the
// interpreter is finalizing, it deletes every thread state itself). A thread
// state left there at finalization is deleted by Python with the others.
struct KeptThreadState {
  PyThreadState* tstate = nullptr;
  KeptThreadState() = default;
  KeptThreadState(const KeptThreadState&) = delete;
  KeptThreadState& operator=(const KeptThreadState&) = delete;
  ~KeptThreadState() {
    if (tstate == nullptr || Py_IsInitialized() == 0 || finalizing()) return;
    Deferred& d = deferred();
    try {
      std::lock_guard<std::mutex> g(d.lock);
      d.exited.push_back(tstate);
      d.size.store(d.objects.size() + d.exited.size(), std::memory_order_relaxed);
    } catch (...) {  // no memory: the thread state stays until the interpreter ends
    }
  }
};
}  // namespace

void keep_thread_state() noexcept {
  thread_local KeptThreadState kept;
  if (kept.tstate != nullptr || Py_IsInitialized() == 0 || PyGILState_GetThisThreadState() != nullptr) return;
  // Bound to this thread (PyGILState_GetThisThreadState finds it) with a
  // gilstate counter of 1, so PyGILState_Release never deletes it.
  kept.tstate = PyThreadState_New(PyInterpreterState_Main());
}

void decref_anywhere(PyObject* o, size_t bytes) noexcept {
  // At interpreter shutdown nothing may take the GIL; the object goes with the process.
  if (Py_IsInitialized() == 0) return;
  if (PyGILState_Check() != 0) {
    Py_DECREF(o);
    return;
  }
  Deferred& d = deferred();
  size_t n = 0;
  if (bytes >= kDeferredBytes) {  // memory the budget counts as free already, or large: free it now
    WorkerGil gil;
    Py_DECREF(o);
    return;
  }
  try {
    std::lock_guard<std::mutex> g(d.lock);
    d.objects.push_back(o);
    n = d.objects.size();
    d.size.store(n + d.exited.size(), std::memory_order_relaxed);
  } catch (...) {  // no memory to defer it: drop it now
    WorkerGil gil;
    Py_DECREF(o);
    return;
  }
  if (n < kDeferredLimit) return;
  WorkerGil gil;
  release_deferred();
}

namespace {
// Warns (RuntimeWarning) that the result of `key` stays in memory because pickle
// raised `e`; returns the message. A warning filter that makes it an error
// raises that error instead. GIL held.
std::string warn_not_spillable(PyObject* key, py::error_already_set& e) {
  const std::string why = py::str("{}: {}").format(e.type().attr("__name__"), e.value());
  const std::string message = py::str("tessera: the result of {!r} cannot spill ({}); it stays in memory")
                                  .format(key != nullptr ? py::handle(key) : py::handle(py::none()), why);
  if (PyErr_WarnEx(PyExc_RuntimeWarning, message.c_str(), 1) != 0) throw py::error_already_set();
  return message;
}
}  // namespace

void spill_object(const PySpillable& v, SpillWriter& w) {
  py::gil_scoped_acquire gil;
  py::list buffers;
  py::bytes data;
  try {
    data = py::module_::import("pickle").attr("dumps")(py::handle(v.get()), py::arg("protocol") = 5,
                                                       py::arg("buffer_callback") = buffers.attr("append"));
  } catch (py::error_already_set& e) {
    throw NotSpillable(warn_not_spillable(v.key(), e));
  }
  std::vector<py::buffer_info> views;
  views.reserve(buffers.size());
  for (py::handle b : buffers) {
    // Out-of-band buffers are contiguous: numpy keeps others in band.
    views.push_back(py::reinterpret_borrow<py::buffer>(b).request());
  }
  const std::string_view pickled = data;
  {
    // The bytes stay alive (held by `data` and `views`) while the GIL is released.
    py::gil_scoped_release unlocked;
    w.put<uint64_t>(v.nbytes());
    w.put<uint64_t>(pickled.size());
    w.write(pickled.data(), pickled.size());
    w.put<uint64_t>(views.size());
    for (const py::buffer_info& b : views) {
      const size_t n = static_cast<size_t>(b.size * b.itemsize);
      w.put<uint64_t>(n);
      w.align(kBufferAlignment);
      w.write(b.ptr, n);
    }
  }
}

PySpillable reload_object(SpillReader& r) {
  const auto bytes = r.get<uint64_t>();
  const auto n = r.get<uint64_t>();
  r.expect(n, 1);
  std::string pickled(n, '\0');
  r.read(pickled.data(), n);
  const auto nbuf = r.get<uint64_t>();
  r.expect(nbuf, sizeof(uint64_t));
  std::vector<MappedBuffer> mapped;
  mapped.reserve(nbuf);
  for (uint64_t i = 0; i < nbuf; ++i) {
    const auto len = r.get<uint64_t>();
    r.align(kBufferAlignment);
    r.expect(len, 1);
    mapped.push_back(MappedBuffer{len > 0 ? r.map(len) : nullptr, len});
  }
  py::gil_scoped_acquire gil;
  py::list buffers;
  for (MappedBuffer& m : mapped) buffers.append(py::cast(std::move(m)));
  py::object obj = py::module_::import("pickle").attr("loads")(py::bytes(pickled), py::arg("buffers") = buffers);
  return PySpillable(obj.release().ptr(), bytes);
}

}  // namespace tessera::python
