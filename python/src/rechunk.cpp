// python/src/rechunk.cpp — tessera.rechunk (rechunk_path from Python) and tessera's
// exception classes.
//
// tessera.rechunk runs tessera::array::rechunk_path, the work of `tessera
// rechunk`, on a thread of its own while the caller waits with the GIL released;
// a KeyboardInterrupt cancels the run through its token (the temporaries are
// removed) and is raised once the run has stopped.
//
// tessera::Error and its subclasses reach Python as tessera.Error (a
// RuntimeError) and subclasses with tessera's message: ChunkError (also a
// ValueError; a BudgetError is one), StorageError, InvalidTypeError (also Python's
// TypeError), InvalidValueError (also Python's ValueError), Cancelled, TaskError,
// MemoryLimitError (also Python's MemoryError). A CodecSpecError, whose
// spec can only have come from a `codec=` argument, is a ChunkError saying
// "codec: ...", as `tessera rechunk` says "--codec: ...".
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <exception>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "python_stderr.hpp"
#include "watch.hpp"
#include "tessera/array/core/chunks.hpp"
#include "tessera/array/rechunk/rechunk_path.hpp"
#include "tessera/diagnostics/progress.hpp"
#include "tessera/graph/error.hpp"

namespace py = pybind11;
namespace ta = tessera::array;

namespace tessera::python {

namespace {

// The Python classes of tessera's errors, made once by bind_rechunk (the module lives as long as the process).
struct ErrorClasses {
  PyObject* error = nullptr;
  PyObject* chunk = nullptr;
  PyObject* storage = nullptr;
  PyObject* type = nullptr;
  PyObject* value = nullptr;
  PyObject* cancelled = nullptr;
  PyObject* task = nullptr;
  PyObject* memory = nullptr;
};
ErrorClasses classes;

PyObject* new_class(py::module_& m, const char* name, py::tuple bases, const char* doc) {
  const std::string qualified = std::string("tessera.") + name;
  PyObject* cls = PyErr_NewExceptionWithDoc(qualified.c_str(), doc, bases.ptr(), nullptr);
  if (cls == nullptr) throw py::error_already_set();
  m.add_object(name, py::handle(cls));
  return cls;
}

void translate(std::exception_ptr p) {
  try {
    if (p) std::rethrow_exception(p);
  } catch (const MemoryLimitError& e) {
    PyErr_SetString(classes.memory, e.what());
  } catch (const CodecSpecError& e) {
    PyErr_SetString(classes.chunk, (std::string("codec: ") + e.what()).c_str());
  } catch (const ChunkError& e) {
    PyErr_SetString(classes.chunk, e.what());
  } catch (const StorageError& e) {
    PyErr_SetString(classes.storage, e.what());
  } catch (const tessera::TypeError& e) {
    PyErr_SetString(classes.type, e.what());
  } catch (const tessera::ValueError& e) {
    PyErr_SetString(classes.value, e.what());
  } catch (const Cancelled& e) {
    PyErr_SetString(classes.cancelled, e.what());
  } catch (const TaskError& e) {
    PyErr_SetString(classes.task, e.what());
  } catch (const Error& e) {
    PyErr_SetString(classes.error, e.what());
  }
}

// One axis of `chunks`: an int (-1 for the whole axis), "auto", or None / "keep" to keep it.
ta::RechunkAxis axis_of(const py::handle& h) {
  if (h.is_none()) return ta::keep;
  if (py::isinstance<py::str>(h)) {
    const std::string s = h.cast<std::string>();
    if (s == "keep") return ta::keep;
    if (s == "auto") return "auto";
    throw ChunkError("chunks: expected a block size, -1, 'auto', 'keep' or None per axis, found '" + s.substr(0, 40) +
                     "'");
  }
  if (py::isinstance<py::bool_>(h) || !py::isinstance<py::int_>(h)) {
    throw ChunkError("chunks: expected a block size, -1, 'auto', 'keep' or None per axis, found a " +
                     std::string(py::str(py::type::handle_of(h).attr("__name__"))));
  }
  const int64_t n = h.cast<int64_t>();
  if (n == 0 || n < -1) {
    throw ChunkError("chunks: expected a block size of at least 1 (or -1 for the whole axis), found " +
                     std::to_string(n));
  }
  return n;
}

// `chunks` as rechunker and dask take it: a sequence with one entry per axis, or a dict axis -> entry.
ta::RechunkSpec spec_of(const py::object& chunks) {
  if (py::isinstance<py::dict>(chunks)) {
    std::map<size_t, ta::RechunkAxis> by_axis;
    for (auto [k, v] : py::reinterpret_borrow<py::dict>(chunks)) {
      if (!py::isinstance<py::int_>(k) || k.cast<int64_t>() < 0) {
        throw ChunkError("chunks: expected axis numbers (ints >= 0) as the dict's keys, found " +
                         std::string(py::repr(k)).substr(0, 40));
      }
      by_axis.emplace(k.cast<size_t>(), axis_of(v));
    }
    return by_axis;
  }
  if (py::isinstance<py::str>(chunks) || !py::isinstance<py::sequence>(chunks)) {
    throw ChunkError("chunks: expected a tuple or list with one entry per axis, or a dict axis -> entry, found " +
                     std::string(py::repr(chunks)).substr(0, 40));
  }
  std::vector<ta::RechunkAxis> axes;
  for (const py::handle h : chunks) axes.push_back(axis_of(h));
  return axes;
}

int64_t bytes_of(const py::object& max_mem) {
  int64_t n = 0;
  if (py::isinstance<py::str>(max_mem)) {
    try {
      n = ta::parse_bytes(max_mem.cast<std::string>());
    } catch (const ChunkError& e) {
      throw ChunkError(std::string("max_mem: ") + e.what());
    }
  } else if (py::isinstance<py::int_>(max_mem) && !py::isinstance<py::bool_>(max_mem)) {
    n = max_mem.cast<int64_t>();
  } else {
    throw ChunkError("max_mem: expected bytes as an int or a string such as '1GiB', found " +
                     std::string(py::repr(max_mem)).substr(0, 40));
  }
  if (n <= 0) throw ChunkError("max_mem: expected a positive size, found " + std::to_string(n));
  return n;
}

ta::RechunkMethod method_of(const std::string& text) {
  if (text == "auto") return ta::RechunkMethod::automatic;
  if (text == "tasks") return ta::RechunkMethod::tasks;
  if (text == "shuffle") return ta::RechunkMethod::shuffle;
  throw ChunkError("method: expected 'auto', 'tasks' or 'shuffle', found '" + text.substr(0, 40) + "'");
}

py::dict rechunk(const std::string& source, const std::string& target, const py::object& chunks,
                 const py::object& max_mem, const std::string& method, const std::optional<std::string>& codec,
                 std::optional<int> zarr_format, const py::object& shard, bool overwrite, bool progress,
                 std::optional<int> num_workers, const std::optional<std::string>& scratch) {
  ta::RechunkPathOptions options;
  options.max_mem = bytes_of(max_mem);
  options.method = method_of(method);
  options.overwrite = overwrite;
  options.num_workers = num_workers.value_or(0);
  if (options.num_workers < 0) {
    throw ChunkError("num_workers: expected a positive number of threads, found " + std::to_string(*num_workers));
  }
  options.scratch_dir = scratch.value_or("");
  options.format.codec = codec.value_or("none");
  options.format.zarr_format = zarr_format.value_or(shard.is_none() ? 2 : 3);  // zarr::create checks it
  // With shards, `chunks` are the inner chunks of each shard and the store's chunks are the shards.
  std::optional<ta::RechunkSpec> spec;
  if (!shard.is_none()) {
    if (options.format.zarr_format != 3) throw ChunkError("shard: needs zarr_format=3");
    for (const py::handle h : chunks) {
      if (py::isinstance<py::bool_>(h) || !py::isinstance<py::int_>(h) || h.cast<int64_t>() <= 0) {
        throw ChunkError("chunks: with shard, expected positive inner chunk sizes, found " +
                         std::string(py::repr(h)).substr(0, 40));
      }
      options.format.inner_chunks.push_back(h.cast<int64_t>());
    }
    spec.emplace(spec_of(shard));
  } else {
    spec.emplace(spec_of(chunks));
  }
  PythonStderr stderr_stream;  // outlives the bar
  std::optional<diagnostics::ProgressBar> bar;
  if (progress) options.compute.callbacks.push_back(bar.emplace(progress_on(stderr_stream)).callbacks());
  ta::RechunkStoreResult done;
  run_watched([&] { done = ta::rechunk_path(source, target, *spec, options); }, options.compute.cancel);
  py::dict out;
  py::list sizes;
  for (const auto& axis : done.chunks.sizes()) sizes.append(py::tuple(py::cast(axis)));
  out["chunks"] = py::tuple(sizes);
  out["direct"] = done.direct;
  return out;
}

}  // namespace

void bind_rechunk(py::module_& m) {
  classes.error =
      new_class(m, "Error", py::make_tuple(py::handle(PyExc_RuntimeError)), "The root of tessera's errors.");
  const py::handle error(classes.error);
  classes.chunk = new_class(m, "ChunkError", py::make_tuple(error, py::handle(PyExc_ValueError)),
                            "Chunks (or a size, a method, a codec) that do not fit the array.");
  classes.storage = new_class(m, "StorageError", py::make_tuple(error),
                              "A file or store that could not be read or written, or may not be replaced.");
  classes.type = new_class(m, "InvalidTypeError", py::make_tuple(error, py::handle(PyExc_TypeError)),
                           "A value of another type than the one expected (also a TypeError).");
  classes.value = new_class(m, "InvalidValueError", py::make_tuple(error, py::handle(PyExc_ValueError)),
                            "An argument tessera does not accept (a storage format, a count, a list of the wrong "
                            "size; also a ValueError).");
  classes.cancelled = new_class(m, "Cancelled", py::make_tuple(error), "A run stopped through its cancellation.");
  classes.task = new_class(m, "TaskError", py::make_tuple(error), "A task of a run failed.");
  classes.memory = new_class(m, "MemoryLimitError", py::make_tuple(error, py::handle(PyExc_MemoryError)),
                             "A run that cannot stay under its memory limit (also a MemoryError).");
  py::register_exception_translator(&translate);
  m.def("rechunk", &rechunk, py::arg("source"), py::arg("target"), py::arg("chunks"), py::arg("max_mem") = "1GiB",
        py::arg("method") = "auto", py::arg("codec") = py::none(), py::arg("zarr_format") = py::none(),
        py::arg("shard") = py::none(), py::arg("overwrite") = false, py::arg("progress") = true,
        py::arg("num_workers") = py::none(), py::arg("scratch") = py::none(),
        R"doc(Rechunks the .npy file or zarr store `source` into a new zarr store `target`, as `tessera rechunk`.

Reads and writes in C++ with the GIL released; Ctrl-C stops it and removes its
temporaries. The target appears only when complete (atomic rename); an existing
one is refused unless `overwrite`, and a folder that is not a store of the kind
written, or holds the source, is never replaced.

Parameters
----------
source : a zarr store (v2 or v3) or a .npy file
target : the zarr store to write (a .npy file when it ends in .npy)
chunks : one entry per axis (a block size, -1 for the whole axis, 'auto', or
    None / 'keep'), or a dict axis -> entry
max_mem : the memory to stay under: bytes, or a string such as '1GiB'
method : 'auto', 'tasks' or 'shuffle'
codec : the target's codec: 'blosc:zstd:5', 'zstd:3', ... (default: none)
zarr_format : 2 or 3 (default: 2, or 3 with `shard`)
shard : (zarr v3) the store's chunks are shards of this shape, cut into inner
    chunks of `chunks`
overwrite : replace a target store
progress : draw a progress bar on sys.stderr
num_workers : threads (default: every core)
scratch : the folder for intermediate files (default: beside the target)

Returns
-------
dict : {'chunks': the target's chunks, 'direct': shards written straight into
    the chunk files}

Raises
------
tessera.ChunkError : chunks, a size, a method or a codec that do not fit
tessera.StorageError : a source that cannot be read, a target that may not be written

Example
-------
>>> tessera.rechunk("rows.zarr", "columns.zarr", (-1, 100), max_mem="1GiB")
{'chunks': ((2000,), (100, ...)), 'direct': False})doc");
}

}  // namespace tessera::python
