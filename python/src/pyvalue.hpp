// python/src/pyvalue.hpp — a Python object as a tessera Value, and how it spills.
//
// The scheduler moves Values between worker threads that do not hold the GIL and
// drops a result the moment its last reader ran. A PyHeld owns one reference to a
// Python object; whichever thread drops the last Value of it releases that
// reference (decref_anywhere: at once with the GIL, else with the next holder of it).
//
// Two kinds: PyHeld<false> stays in memory; PyHeld<true> has a Spillable form
// (pickle protocol 5, buffers out of band, each at a page boundary of the scratch
// file so that reloading maps them instead of copying). A run with a memory limit
// makes its large results of the second kind (get.cpp says which).
#pragma once

#include <Python.h>

#include <algorithm>
#include <cstddef>
#include <utility>

#include "tessera/graph/spill.hpp"
#include "tessera/graph/value.hpp"

namespace tessera::python {

//! Drops one reference to `o`, an object of `bytes` bytes (0: not measured): at
//! once when this thread holds the GIL or `o` is 64 KiB or more (its memory is
//! freed before the worker takes its next task, or waits for one), else later, by
//! the next release_deferred (a task body, the end of a run), or by this thread
//! taking the GIL once a few hundred are waiting.
void decref_anywhere(PyObject* o, size_t bytes = 0) noexcept;

//! Drops the references that decref_anywhere deferred (GIL held).
void release_deferred() noexcept;

//! Gives this thread a Python thread state of its own for the rest of its life
//! when it has none (a worker of the scheduler, not a thread Python made); the
//! thread state is deleted when the thread exits. Call without the GIL.
//! Without it every GIL acquisition on such a thread makes and deletes a thread
//! state (PyGILState_Ensure/Release): a 16 KiB frame stack mapped and unmapped
//! per task body, most of tessera.get's own time on graphs of tiny tasks.
void keep_thread_state() noexcept;

//! The GIL, taken by a scheduler's worker thread (keep_thread_state, then
//! PyGILState_Ensure) for the scope of this object.
class WorkerGil {
 public:
  WorkerGil() noexcept : state_((keep_thread_state(), PyGILState_Ensure())) {}
  WorkerGil(const WorkerGil&) = delete;
  WorkerGil& operator=(const WorkerGil&) = delete;
  ~WorkerGil() { PyGILState_Release(state_); }

 private:
  PyGILState_STATE state_;
};

//! One owned reference to a Python object and its accounted size in bytes.
template <bool Spill>
class PyHeld {
 public:
  //! Takes over the reference `owned` (a new reference). `bytes`: what the run
  //! accounts for it (0 without a memory limit); `buffer`: the bytes its buffer
  //! holds when known, so that dropping a large one without a limit is not
  //! deferred either (decref_anywhere); `key`: the task's Python key (borrowed:
  //! the run's Converted holds it), named when the object cannot spill.
  PyHeld(PyObject* owned, size_t bytes, size_t buffer = 0, PyObject* key = nullptr)
      : obj_(owned), key_(key), bytes_(bytes), freed_(std::max(bytes, buffer)) {}
  PyHeld(PyHeld&& o) noexcept
      : obj_(std::exchange(o.obj_, nullptr)), key_(o.key_), bytes_(o.bytes_), freed_(o.freed_) {}
  PyHeld(const PyHeld&) = delete;
  PyHeld& operator=(const PyHeld&) = delete;
  PyHeld& operator=(PyHeld&&) = delete;
  ~PyHeld() {
    if (obj_ != nullptr) decref_anywhere(obj_, freed_);
  }
  //! A borrowed reference, valid while this holder lives.
  PyObject* get() const { return obj_; }
  size_t nbytes() const { return bytes_; }
  //! The key of the task that made it (borrowed), or nullptr.
  PyObject* key() const { return key_; }

 private:
  PyObject* obj_;
  PyObject* key_;
  size_t bytes_;
  size_t freed_;  // what dropping the last reference frees, as far as known
};

using PyValue = PyHeld<false>;
using PySpillable = PyHeld<true>;

//! The object a Value made by this module holds (borrowed), or nullptr when the
//! Value holds something else.
inline PyObject* object_of(const Value& v) {
  if (v.is<PyValue>()) return v.as<PyValue>().get();
  if (v.is<PySpillable>()) return v.as<PySpillable>().get();
  return nullptr;
}

//! Pickles (protocol 5) and unpickles a spilled object; the GIL is taken inside.
//! An object pickle refuses (a lock, a lambda, a list too deep) is NotSpillable,
//! with a RuntimeWarning naming its key and pickle's reason.
void spill_object(const PySpillable& v, SpillWriter& w);
PySpillable reload_object(SpillReader& r);

}  // namespace tessera::python

template <>
struct tessera::Spillable<tessera::python::PySpillable> {
  static void serialize(const tessera::python::PySpillable& v, SpillWriter& w) { tessera::python::spill_object(v, w); }
  static tessera::python::PySpillable deserialize(SpillReader& r) { return tessera::python::reload_object(r); }
};
