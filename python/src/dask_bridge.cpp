// python/src/dask_bridge.cpp — tessera arrays as dask arrays and back
// (tessera.array.to_dask / from_dask; the Python halves are in tessera/array.py).
//
// To dask: a `_Blocks` object holds one tessera array's graph and its compiled
// form, built once; calling it with a block index culls the graph to what that
// block needs (cull_one: linear in that part, not in the whole graph) and runs it on the
// calling thread with the GIL released. dask's graph then has one task per
// block, `(_Blocks, i, j, ...)`, which any dask scheduler (tessera.get
// included) runs like any other task. Work that several blocks need (an input
// block read by two output blocks of a rechunk) is done once per block that
// needs it, as each block is its own run.
//
// From dask: dask's graph is converted once (convert.hpp, as tessera.get does)
// into the tasks of one layer, and each block `(name, i, j, ...)` gets a task
// that copies the numpy array dask's task returned into tessera's memory. The
// result is an ordinary tessera array: its blocks run on tessera's scheduler,
// dask's task bodies under the GIL, and tessera's operations over them in C++.
// A block that is not a numpy array of the declared shape and dtype is an error
// naming the block and what it was.
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "bindings.hpp"
#include "convert.hpp"
#include "numpy_bridge.hpp"
#include "pyvalue.hpp"
#include "tessera/array/array.hpp"
#include "tessera/graph/compiled.hpp"
#include "tessera/graph/error.hpp"
#include "tessera/graph/task.hpp"
#include "tessera/optimize/graph_ops.hpp"
#include "tessera/scheduler/get.hpp"

namespace py = pybind11;
namespace ta = tessera::array;

namespace tessera::python {

namespace {

// One tessera array's graph, compiled once; computes any of its blocks alone.
class Blocks {
 public:
  explicit Blocks(const ta::Array& x) : x_(x), graph_(x.graph()), compiled_(compile(graph_)) {}

  // Block `index` of the array, computed on this thread without the GIL.
  py::array operator()(const py::args& index) const {
    std::vector<int64_t> at;
    for (const py::handle h : index) at.push_back(h.cast<int64_t>());
    const std::vector<int64_t> numblocks = x_.numblocks();
    bool inside = at.size() == numblocks.size();
    for (size_t a = 0; inside && a < at.size(); ++a) inside = at[a] >= 0 && at[a] < numblocks[a];
    if (!inside) {
      throw ChunkError("block " + std::string(py::repr(index)) + " of " + x_.name() + ": expected an index below " +
                       ta::shape_str(numblocks));
    }
    ta::NDArray block;
    {
      py::gil_scoped_release unlocked;
      const Key key = x_.block_key(at);
      const Graph part = cull_one(graph_, compiled_, *graph_.index_of(key));
      // One worker: a dask scheduler already runs the blocks side by side.
      block = tessera::get(part, key, {.num_workers = 1}).as<ta::NDArray>();
    }
    return to_numpy(block);
  }

 private:
  ta::Array x_;
  Graph graph_;
  CompiledGraph compiled_;
};

// The numpy array a dask task made for block `key`, copied into tessera's memory;
// TypeError naming the block unless it is one of `dtype` and `shape`.
ta::NDArray block_of(const Value& v, const std::string& key, ta::DType dtype, const ta::Shape& shape) {
  py::gil_scoped_acquire gil;
  const py::handle o(object_of(v));
  if (!o || !py::isinstance<py::array>(o)) {
    const std::string found = o ? std::string(py::str(py::type::handle_of(o).attr("__name__"))) : v.type_name();
    throw TypeError("from_dask: block " + key + " is a " + found +
                    ", expected a numpy array (tessera holds numpy blocks only)");
  }
  const py::array a = py::reinterpret_borrow<py::array>(o);
  const ta::Shape found(a.shape(), a.shape() + a.ndim());
  if (found != shape || tessera_dtype(a.dtype()) != dtype) {
    throw TypeError("from_dask: block " + key + " is a " + std::string(py::str(a.dtype())) + " array of shape " +
                    ta::shape_str(found) + ", expected " + dtype.name() + " of shape " + ta::shape_str(shape));
  }
  return from_numpy_copy(a);
}

// A tessera array over dask's graph `dsk` whose blocks are the keys (name, i, j, ...) of `chunks`.
ta::Array from_graph(const py::dict& dsk, const std::string& name, const std::vector<std::vector<int64_t>>& sizes,
                     const py::dtype& numpy_type) {
  const ta::DType dtype = tessera_dtype(numpy_type);
  const ta::Chunks chunks(sizes);
  KeyMap keys;
  Converted converted = convert(dsk, keys, std::make_shared<const ResultPolicy>());
  Graph layer = std::move(converted.graph);
  const std::string out = "from-dask-" + name;
  std::vector<Key> blocks;
  ta::for_each_block(chunks, [&](std::span<const int64_t> b) {
    py::tuple py_key(b.size() + 1);
    py_key[0] = py::str(name);
    for (size_t a = 0; a < b.size(); ++a) py_key[a + 1] = py::int_(b[a]);
    const Key from = keys(py_key);
    if (!layer.contains(from)) {
      throw ValueError("from_dask: the graph of " + name + " lacks its block " + std::string(py::repr(py_key)));
    }
    ta::Shape shape(b.size());
    for (size_t a = 0; a < b.size(); ++a) shape[a] = sizes[a][b[a]];
    const std::string text = std::string(py::repr(py_key));
    // Untyped (the span of evaluated arguments): the Value is a Python object's holder.
    auto copy = [text, dtype, shape](std::span<const Value> args) { return block_of(args[0], text, dtype, shape); };
    layer.task(Key(out, b), fn("from_dask", std::move(copy)), ref(from));
  });
  return ta::Array(out, chunks, dtype, std::move(layer));
}

}  // namespace

void bind_dask_bridge(py::module_& m) {
  py::class_<Blocks, std::shared_ptr<Blocks>>(m, "_Blocks",
                                             "The blocks of one tessera array, each computed alone when called with "
                                             "its index (what tessera.array.to_dask's tasks call).")
      .def(py::init<const ta::Array&>(), py::arg("x"))
      .def("__call__", &Blocks::operator());
  m.def("_from_graph", &from_graph, py::arg("dsk"), py::arg("name"), py::arg("chunks"), py::arg("dtype"),
        "A tessera array over dask's graph `dsk` (a dict) whose blocks are the keys (name, i, j, ...) of `chunks`.");
}

}  // namespace tessera::python
