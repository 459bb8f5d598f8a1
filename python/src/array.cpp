// python/src/array.cpp — tessera.array: tessera's lazy chunked arrays from Python.
//
// tessera.array.Array wraps tessera::array::Array: every operation builds C++
// graph layers (the element-wise operators with numpy's broadcasting,
// reductions, transpose, matmul, fft2/rfft2); `compute()` runs the graph on
// tessera's scheduler with the GIL released and returns a numpy array over the
// result's own memory (no copy: the array's base keeps the NDArray alive).
// `from_numpy` copies the numpy array once into tessera's memory, so later
// changes to it do not reach the lazy array.
#include <pybind11/complex.h>
#include <pybind11/numpy.h>
#include <pybind11/pybind11.h>
#include <pybind11/stl.h>

#include <complex>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bindings.hpp"
#include "numpy_bridge.hpp"
#include "watch.hpp"
#include "tessera/array/array.hpp"
#include "tessera/array/io/hdf5.hpp"
#include "tessera/array/io/zarr.hpp"
#include "tessera/array/ops/creation.hpp"
#include "tessera/array/ops/elementwise.hpp"
#include "tessera/array/ops/fft.hpp"
#include "tessera/array/ops/linalg.hpp"
#include "tessera/array/ops/reductions.hpp"
#include "tessera/array/ops/shape.hpp"
#include "tessera/array/ops/store.hpp"
#include "tessera/array/rechunk/rechunk.hpp"
#include "tessera/graph/error.hpp"

namespace py = pybind11;
namespace ta = tessera::array;

namespace tessera::python {

py::dtype numpy_dtype(ta::DType d) { return py::dtype(d.str()); }

ta::DType tessera_dtype(const py::dtype& d) {
  return ta::DType::parse(std::string(py::str(d.attr("str"))));
}

// A numpy array over `a`'s memory; its base owns a copy of the NDArray (a shared reference to the buffer).
py::array to_numpy(const ta::NDArray& a) {
  auto* owner = new ta::NDArray(a);
  py::capsule base(owner, [](void* p) { delete static_cast<ta::NDArray*>(p); });
  std::vector<py::ssize_t> shape(a.shape().begin(), a.shape().end());
  std::vector<py::ssize_t> strides(a.strides().begin(), a.strides().end());
  py::array out(numpy_dtype(a.dtype()), shape, strides, a.data(), base);
  if (!a.writable()) py::detail::array_proxy(out.ptr())->flags &= ~py::detail::npy_api::NPY_ARRAY_WRITEABLE_;
  return out;
}

// A copy of a numpy array in tessera's memory (C order).
ta::NDArray from_numpy_copy(const py::array& in) {
  const py::array c = py::array::ensure(in, py::array::c_style);
  if (!c) throw py::error_already_set();
  const ta::DType dtype = tessera_dtype(c.dtype());
  ta::Shape shape(c.shape(), c.shape() + c.ndim());
  ta::NDArray out = ta::NDArray::empty(dtype, shape);
  if (out.nbytes() > 0) std::memcpy(out.data(), c.data(), out.nbytes());
  return out;
}

namespace {

std::string short_repr(const py::handle& h) { return std::string(py::repr(h)).substr(0, 40); }

// One axis of a chunk specification: an int (-1: whole axis), None (whole axis), "auto", or a tuple of sizes.
ta::AxisChunks axis_chunks(const py::handle& h) {
  if (h.is_none()) return ta::AxisChunks(std::nullopt);
  if (py::isinstance<py::str>(h)) return ta::AxisChunks(h.cast<std::string>());
  if (py::isinstance<py::int_>(h) && !py::isinstance<py::bool_>(h)) return ta::AxisChunks(h.cast<int64_t>());
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h))
    return ta::AxisChunks(h.cast<std::vector<int64_t>>());
  throw ChunkError("chunks: expected an int, -1, None, 'auto' or a tuple of sizes per axis, found " + short_repr(h));
}

// A chunk specification as dask's normalize_chunks takes it: an int, "auto" (or "64MiB"), or one entry per axis.
ta::ChunkSpec chunk_spec(const py::object& chunks) {
  if (py::isinstance<py::str>(chunks)) return ta::ChunkSpec(chunks.cast<std::string>());
  if (py::isinstance<py::int_>(chunks) && !py::isinstance<py::bool_>(chunks))
    return ta::ChunkSpec(chunks.cast<int64_t>());
  if (py::isinstance<py::tuple>(chunks) || py::isinstance<py::list>(chunks)) {
    std::vector<ta::AxisChunks> axes;
    for (const py::handle h : chunks) axes.push_back(axis_chunks(h));
    return ta::ChunkSpec(std::move(axes));
  }
  throw ChunkError("chunks: expected an int, 'auto' or one entry per axis, found " + short_repr(chunks));
}

ta::Array from_numpy(const py::array& data, const py::object& chunks) {
  return ta::from_ndarray(from_numpy_copy(data), chunk_spec(chunks));
}

// A Python number as a tessera Scalar, or nothing when `h` is not one.
std::optional<ta::Scalar> scalar_of(const py::handle& h) {
  if (py::isinstance<py::bool_>(h)) return ta::Scalar(h.cast<bool>());
  if (py::isinstance<py::int_>(h)) return ta::Scalar(h.cast<int64_t>());
  if (py::isinstance<py::float_>(h)) return ta::Scalar(h.cast<double>());
  if (PyComplex_Check(h.ptr())) return ta::Scalar(h.cast<std::complex<double>>());
  return std::nullopt;
}

// `a op other` (or `other op a` when `reflected`): another Array, a Python number, or a numpy array.
py::object binary(ta::BinaryOp op, const ta::Array& a, const py::object& other, bool reflected) {
  if (py::isinstance<ta::Array>(other)) {
    const ta::Array& b = other.cast<const ta::Array&>();
    return py::cast(reflected ? ta::elementwise(op, b, a) : ta::elementwise(op, a, b));
  }
  if (const std::optional<ta::Scalar> s = scalar_of(other)) return py::cast(ta::elementwise(op, a, *s, reflected));
  if (py::isinstance<py::array>(other)) {
    const ta::Array b = from_numpy(other, py::int_(-1));
    return py::cast(reflected ? ta::elementwise(op, b, a) : ta::elementwise(op, a, b));
  }
  return py::reinterpret_borrow<py::object>(Py_NotImplemented);
}

// `axis` as numpy takes it: None (every axis), an int or a tuple of ints.
std::vector<int> axes_of(const py::object& axis) {
  if (axis.is_none()) return {};
  if (py::isinstance<py::int_>(axis)) return {axis.cast<int>()};
  return axis.cast<std::vector<int>>();
}

ta::FftNOptions fft_options(const py::object& axes) {
  ta::FftNOptions o;
  if (!axes.is_none()) o.axes = axes.cast<std::vector<int>>();
  return o;
}

py::array compute(const ta::Array& x, std::optional<int> num_workers) {
  ta::ComputeOptions options;
  options.num_workers = num_workers.value_or(0);
  ta::NDArray result;
  // GIL released, Ctrl-C cancels the run and is raised once it stopped (watch.hpp).
  run_watched([&] { result = x.compute(options); }, options.cancel);
  return to_numpy(result);
}

void store(const ta::Array& x, const std::string& path, const std::optional<std::string>& codec,
           std::optional<int> zarr_format, bool overwrite, std::optional<int> num_workers) {
  ta::StoreOptions options;
  options.overwrite = overwrite;
  options.zarr.codec = codec.value_or("none");
  options.zarr.zarr_format = zarr_format.value_or(2);  // zarr::create checks it
  options.hdf5 = {.codec = options.zarr.codec, .shuffle = options.zarr.codec != "none"};  // a "FILE.h5:/x" path
  options.compute.num_workers = num_workers.value_or(0);
  // A bad codec: a CodecSpecError, tessera.ChunkError "codec: ...". Ctrl-C cancels the run, which removes
  // the temporary output, and is raised once it stopped (watch.hpp).
  run_watched([&] { ta::store(x, path, options); }, options.compute.cancel);
}

ta::Array reduce(ta::Array (*f)(const ta::Array&, const ta::ReduceOptions&), const ta::Array& x,
                 const py::object& axis, bool keepdims, int ddof) {
  ta::ReduceOptions o;
  o.axis = axes_of(axis);
  o.keepdims = keepdims;
  o.ddof = ddof;
  return f(x, o);
}

// The docstring of reduction `name` (numpy's of the same name, over blocks).
std::string reduction_doc(const std::string& name, const std::string& what, bool ddof) {
  return "The " + what + " of `x` along `axis`, as numpy." + name +
         " (lazy).\n\nParameters\n----------\n"
         "x : Array\naxis : None (every axis), an int or a tuple of ints\n"
         "keepdims : keep the reduced axes with size 1\n" +
         (ddof ? "ddof : delta degrees of freedom (the divisor is N - ddof)\n" : "") +
         "\nReturns\n-------\nArray\n\nRaises\n------\ntessera.Error : an axis the array does not have\n"
         "\nExample\n-------\n>>> ta." +
         name + "(x, axis=0).compute()";
}

}  // namespace

void bind_array(py::module_& m) {
  py::module_ sub = m.def_submodule("_array", "tessera's lazy chunked arrays (tessera.array is the public module)");
  py::class_<ta::Array> cls(sub, "Array", R"doc(A lazy chunked n-D array: operations build a graph, compute() runs it.

Made by from_numpy, from_zarr, from_npy or from_dask, never directly. Element-wise
+ - * / broadcast as numpy does (with Arrays, numbers and numpy arrays), @ is matmul.

Example
-------
>>> import numpy as np, tessera.array as ta
>>> x = ta.from_numpy(np.arange(6.0).reshape(2, 3), chunks=(1, 3))
>>> (x * 2).compute()
array([[ 0.,  2.,  4.],
       [ 6.,  8., 10.]]))doc");
  cls.def_property_readonly(
         "shape", [](const ta::Array& x) { return py::tuple(py::cast(x.shape())); },
         "The size of each axis (a tuple of ints).")
      .def_property_readonly("ndim", &ta::Array::ndim, "The number of axes.")
      .def_property_readonly("size", &ta::Array::size, "The number of elements.")
      .def_property_readonly("nbytes", &ta::Array::nbytes, "The bytes of the computed array.")
      .def_property_readonly(
          "dtype", [](const ta::Array& x) { return numpy_dtype(x.dtype()); }, "The element type (a numpy dtype).")
      .def_property_readonly("name", &ta::Array::name, "The name of the array's graph layer (its blocks' keys).")
      .def_property_readonly(
          "chunks",
          [](const ta::Array& x) {
            py::list axes;
            for (const auto& a : x.chunks().sizes()) axes.append(py::tuple(py::cast(a)));
            return py::tuple(axes);
          },
          "The block sizes along each axis, as dask's chunks: a tuple of tuples.")
      .def("__repr__",
           [](const ta::Array& x) {
             return "tessera.array.Array<" + x.name() + ", shape=" + ta::shape_str(x.shape()) +
                    ", dtype=" + x.dtype().name() + ", chunksize=" + ta::shape_str(x.chunks().max_block_shape()) + ">";
           })
      .def("compute", &compute, py::arg("num_workers") = py::none(), R"doc(Computes the array into numpy.

Runs the graph on tessera's scheduler with the GIL released and returns a numpy
array over the result's own memory, without a copy.

Parameters
----------
num_workers : threads to run on (default: every core)

Returns
-------
numpy.ndarray of the array's shape and dtype

Raises
------
tessera.Error : a block could not be computed (a file gone, a bad chunk)

Example
-------
>>> ta.from_numpy(np.ones((4, 4)), chunks=2).compute().sum()
16.0)doc")
      .def(
          "__array__", [](const ta::Array& x, const py::object&) { return compute(x, std::nullopt); },
          py::arg("dtype") = py::none(), "numpy's protocol: np.asarray(x) computes x.")
      .def(
          "rechunk", [](const ta::Array& x, const py::object& chunks) { return ta::rechunk(x, chunk_spec(chunks)); },
          py::arg("chunks"), R"doc(The same array in other blocks (lazy).

Parameters
----------
chunks : as dask's: an int, 'auto', '64MiB', or per axis an int, -1 or None
    (the whole axis), 'auto' or a tuple of sizes

Returns
-------
Array

Raises
------
tessera.ChunkError : chunks that do not fit the array

Example
-------
>>> x.rechunk((-1, 100)).chunks)doc")
      .def(
          "astype",
          [](const ta::Array& x, const py::object& d) { return ta::astype(x, tessera_dtype(py::dtype::from_args(d))); },
          "The array converted to another dtype (lazy), as numpy's astype: x.astype('float32').")
      .def(
          "transpose",
          [](const ta::Array& x, const py::args& axes) {
            if (axes.empty()) return ta::transpose(x);
            if (axes.size() == 1 && !py::isinstance<py::int_>(axes[0]))
              return ta::transpose(x, axes[0].cast<std::vector<int>>());
            return ta::transpose(x, axes.cast<std::vector<int>>());
          },
          "The array with its axes reversed, or permuted as the axes given say (numpy's transpose; lazy).")
      .def_property_readonly(
          "T", [](const ta::Array& x) { return ta::transpose(x); }, "The array with its axes reversed.")
      .def("__matmul__", [](const ta::Array& a, const ta::Array& b) { return ta::matmul(a, b); })
      .def("__neg__",
           [](const ta::Array& a) { return ta::elementwise(ta::BinaryOp::multiply, a, ta::Scalar(int64_t{-1})); });
  struct Op {
    const char* name;
    const char* rname;
    ta::BinaryOp op;
  };
  for (const Op& o : {Op{"__add__", "__radd__", ta::BinaryOp::add}, Op{"__sub__", "__rsub__", ta::BinaryOp::subtract},
                      Op{"__mul__", "__rmul__", ta::BinaryOp::multiply},
                      Op{"__truediv__", "__rtruediv__", ta::BinaryOp::divide}}) {
    const ta::BinaryOp op = o.op;
    cls.def(
        o.name, [op](const ta::Array& a, const py::object& b) { return binary(op, a, b, false); }, py::is_operator());
    cls.def(
        o.rname, [op](const ta::Array& a, const py::object& b) { return binary(op, a, b, true); }, py::is_operator());
  }
  // numpy defers to our reflected operators instead of broadcasting over an Array as an object.
  cls.attr("__array_priority__") = 100;
  cls.attr("__array_ufunc__") = py::none();

  sub.def(
      "from_npy",
      [](const std::string& path, const py::object& chunks) {
        return chunks.is_none() ? ta::from_npy(path) : ta::from_npy(path, chunk_spec(chunks));
      },
      py::arg("path"), py::arg("chunks") = py::none(),
      R"doc(The .npy file at `path` as a lazy Array (read when computed).

Parameters
----------
path : a .npy file
chunks : its blocks (as Array.rechunk takes them; default: the whole file in blocks of about 128 MiB)

Returns
-------
Array

Raises
------
tessera.StorageError : no such file, or not a .npy file tessera reads

Example
-------
>>> ta.from_npy("data.npy", chunks=(1000, -1)))doc");
  sub.def(
      "from_zarr",
      [](const std::string& path, const py::object& chunks) {
        return chunks.is_none() ? ta::from_zarr(path) : ta::from_zarr(path, chunk_spec(chunks));
      },
      py::arg("path"), py::arg("chunks") = py::none(),
      R"doc(The zarr array (v2 or v3) at `path` as a lazy Array, read in C++ when computed.

Parameters
----------
path : the store's folder
chunks : its blocks (default: the store's chunks)

Returns
-------
Array

Raises
------
tessera.StorageError : no store there, or one tessera cannot read

Example
-------
>>> ta.from_zarr("big.zarr").chunks)doc");
  sub.def(
      "from_hdf5",
      [](const std::string& path, const std::string& dataset, const py::object& chunks) {
        return chunks.is_none() ? ta::from_hdf5(path, dataset) : ta::from_hdf5(path, dataset, chunk_spec(chunks));
      },
      py::arg("path"), py::arg("dataset"), py::arg("chunks") = py::none(),
      R"doc(The dataset at `dataset` of the HDF5 file `path` as a lazy Array: chunks read under
libhdf5's lock, their filters (deflate, shuffle, fletcher32, ...) decoded in parallel in C++.

Parameters
----------
path : the HDF5 file
dataset : the dataset's path inside it, such as "/group/x"
chunks : its blocks (default: the dataset's chunks)

Returns
-------
Array

Raises
------
tessera.StorageError : no such file or dataset (the message names the groups that exist), or a file libhdf5
    cannot read
tessera.InvalidTypeError : a compound, string or variable-length dataset

Example
-------
>>> ta.from_hdf5("data.h5", "/x").chunks)doc");
  sub.def("from_netcdf", &ta::from_netcdf, py::arg("path"), py::arg("variable"),
          R"doc(The variable `variable` of the NetCDF-4 file `path` as a lazy Array (NetCDF-4 is HDF5 underneath).

Parameters
----------
path : the NetCDF-4 file
variable : the variable's name, or its path inside groups ("/group/t")

Returns
-------
Array

Raises
------
tessera.StorageError : no such file or variable, or a file libhdf5 cannot read

Example
-------
>>> ta.from_netcdf("model.nc", "t").shape)doc");
  sub.def("from_numpy", &from_numpy, py::arg("data"), py::arg("chunks") = "auto",
          R"doc(A numpy array as an Array, copied once into tessera's memory: later changes to `data` do not reach it.

Parameters
----------
data : a numpy array (bool, integer, float or complex)
chunks : its blocks (as Array.rechunk takes them; default 'auto')

Returns
-------
Array

Raises
------
tessera.ChunkError : chunks that do not fit the array

Example
-------
>>> ta.from_numpy(np.ones((100, 100)), chunks=50).chunks
((50, 50), (50, 50)))doc");
  sub.def("store", &store, py::arg("x"), py::arg("path"), py::arg("codec") = py::none(),
          py::arg("zarr_format") = py::none(), py::arg("overwrite") = false, py::arg("num_workers") = py::none(),
          R"doc(Computes `x` into a zarr store at `path` (GIL released), block by block.

Parameters
----------
x : Array
path : the store's folder; it appears only when complete (atomic rename)
codec : 'zstd:3', 'blosc:zstd:5', ... (default: none)
zarr_format : 2 (default) or 3
overwrite : replace a store tessera wrote there before
num_workers : threads to run on (default: every core)

Returns
-------
None

Raises
------
tessera.StorageError : the target exists (without overwrite) or cannot be written
tessera.ChunkError : a codec tessera does not know ("codec: ...")

Example
-------
>>> ta.store(x, "out.zarr", codec="zstd:3"))doc");
  sub.def(
      "sum", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::sum, x, axis, k, 0); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
      reduction_doc("sum", "sum", false).c_str());
  sub.def(
      "mean", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::mean, x, axis, k, 0); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
      reduction_doc("mean", "mean", false).c_str());
  sub.def(
      "min", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::min, x, axis, k, 0); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
      reduction_doc("min", "minimum", false).c_str());
  sub.def(
      "max", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::max, x, axis, k, 0); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false,
      reduction_doc("max", "maximum", false).c_str());
  sub.def(
      "std",
      [](const ta::Array& x, const py::object& axis, bool k, int ddof) { return reduce(&ta::std, x, axis, k, ddof); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("ddof") = 0,
      reduction_doc("std", "standard deviation", true).c_str());
  sub.def(
      "var",
      [](const ta::Array& x, const py::object& axis, bool k, int ddof) { return reduce(&ta::var, x, axis, k, ddof); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("ddof") = 0,
      reduction_doc("var", "variance", true).c_str());
  sub.def("matmul", &ta::matmul, py::arg("a"), py::arg("b"), R"doc(The matrix product of two 2-D arrays, a @ b (lazy).

Parameters
----------
a, b : Arrays of shapes (n, k) and (k, m)

Returns
-------
Array of shape (n, m)

Raises
------
tessera.Error : shapes that do not match

Example
-------
>>> ta.matmul(x.T, x).compute())doc");
  sub.def(
      "fft2", [](const ta::Array& x, const py::object& axes) { return ta::fft2(x, fft_options(axes)); }, py::arg("x"),
      py::arg("axes") = py::none(),
      R"doc(The 2-D discrete Fourier transform, as numpy.fft.fft2 (lazy).

Parameters
----------
x : Array
axes : the two axes to transform (default: the last two)

Returns
-------
Array of complex numbers

Raises
------
tessera.Error : fewer than two axes

Example
-------
>>> ta.fft2(x).compute())doc");
  sub.def(
      "rfft2", [](const ta::Array& x, const py::object& axes) { return ta::rfft2(x, fft_options(axes)); }, py::arg("x"),
      py::arg("axes") = py::none(),
      R"doc(The 2-D Fourier transform of real input, as numpy.fft.rfft2 (lazy).

Parameters
----------
x : Array of real numbers
axes : the two axes to transform (default: the last two)

Returns
-------
Array of complex numbers, the last axis n // 2 + 1 long

Raises
------
tessera.Error : fewer than two axes, or complex input

Example
-------
>>> ta.rfft2(x).compute())doc");
}

}  // namespace tessera::python
