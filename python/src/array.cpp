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
#include "tessera/array/array.hpp"
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
  {
    py::gil_scoped_release unlocked;
    result = x.compute(options);
  }
  return to_numpy(result);
}

void store(const ta::Array& x, const std::string& path, const std::optional<std::string>& codec,
           std::optional<int> zarr_format, bool overwrite, std::optional<int> num_workers) {
  ta::StoreOptions options;
  options.overwrite = overwrite;
  options.zarr.codec = codec.value_or("none");
  options.zarr.zarr_format = zarr_format.value_or(2);  // zarr::create checks it
  options.compute.num_workers = num_workers.value_or(0);
  py::gil_scoped_release unlocked;
  ta::store(x, path, options);  // a bad codec: a CodecSpecError, tessera.ChunkError "codec: ..."
}

ta::Array reduce(ta::Array (*f)(const ta::Array&, const ta::ReduceOptions&), const ta::Array& x,
                 const py::object& axis, bool keepdims, int ddof) {
  ta::ReduceOptions o;
  o.axis = axes_of(axis);
  o.keepdims = keepdims;
  o.ddof = ddof;
  return f(x, o);
}

}  // namespace

void bind_array(py::module_& m) {
  py::module_ sub = m.def_submodule("_array", "tessera's lazy chunked arrays (tessera.array is the public module)");
  py::class_<ta::Array> cls(sub, "Array", "A lazy chunked n-D array; operations build a graph, compute() runs it.");
  cls.def_property_readonly("shape", [](const ta::Array& x) { return py::tuple(py::cast(x.shape())); })
      .def_property_readonly("ndim", &ta::Array::ndim)
      .def_property_readonly("size", &ta::Array::size)
      .def_property_readonly("nbytes", &ta::Array::nbytes)
      .def_property_readonly("dtype", [](const ta::Array& x) { return numpy_dtype(x.dtype()); })
      .def_property_readonly("name", &ta::Array::name)
      .def_property_readonly("chunks",
                             [](const ta::Array& x) {
                               py::list axes;
                               for (const auto& a : x.chunks().sizes()) axes.append(py::tuple(py::cast(a)));
                               return py::tuple(axes);
                             })
      .def("__repr__",
           [](const ta::Array& x) {
             return "tessera.array.Array<" + x.name() + ", shape=" + ta::shape_str(x.shape()) +
                    ", dtype=" + x.dtype().name() + ", chunksize=" + ta::shape_str(x.chunks().max_block_shape()) + ">";
           })
      .def("compute", &compute, py::arg("num_workers") = py::none(),
           "Runs the graph (GIL released) and returns a numpy array over the result's memory, without a copy.")
      .def(
          "__array__", [](const ta::Array& x, const py::object&) { return compute(x, std::nullopt); },
          py::arg("dtype") = py::none())
      .def(
          "rechunk", [](const ta::Array& x, const py::object& chunks) { return ta::rechunk(x, chunk_spec(chunks)); },
          py::arg("chunks"))
      .def("astype", [](const ta::Array& x,
                        const py::object& d) { return ta::astype(x, tessera_dtype(py::dtype::from_args(d))); })
      .def("transpose",
           [](const ta::Array& x, const py::args& axes) {
             if (axes.empty()) return ta::transpose(x);
             if (axes.size() == 1 && !py::isinstance<py::int_>(axes[0]))
               return ta::transpose(x, axes[0].cast<std::vector<int>>());
             return ta::transpose(x, axes.cast<std::vector<int>>());
           })
      .def_property_readonly("T", [](const ta::Array& x) { return ta::transpose(x); })
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

  sub.def("from_npy",
          [](const std::string& path, const py::object& chunks) {
            return chunks.is_none() ? ta::from_npy(path) : ta::from_npy(path, chunk_spec(chunks));
          },
          py::arg("path"), py::arg("chunks") = py::none());
  sub.def("from_zarr",
          [](const std::string& path, const py::object& chunks) {
            return chunks.is_none() ? ta::from_zarr(path) : ta::from_zarr(path, chunk_spec(chunks));
          },
          py::arg("path"), py::arg("chunks") = py::none());
  sub.def("from_numpy", &from_numpy, py::arg("data"), py::arg("chunks") = "auto");
  sub.def("store", &store, py::arg("x"), py::arg("path"), py::arg("codec") = py::none(),
          py::arg("zarr_format") = py::none(), py::arg("overwrite") = false, py::arg("num_workers") = py::none());
  sub.def("sum", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::sum, x, axis, k, 0); },
          py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  sub.def("mean", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::mean, x, axis, k, 0); },
          py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  sub.def("min", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::min, x, axis, k, 0); },
          py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  sub.def("max", [](const ta::Array& x, const py::object& axis, bool k) { return reduce(&ta::max, x, axis, k, 0); },
          py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  sub.def(
      "std",
      [](const ta::Array& x, const py::object& axis, bool k, int ddof) { return reduce(&ta::std, x, axis, k, ddof); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("ddof") = 0);
  sub.def(
      "var",
      [](const ta::Array& x, const py::object& axis, bool k, int ddof) { return reduce(&ta::var, x, axis, k, ddof); },
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false, py::arg("ddof") = 0);
  sub.def("matmul", &ta::matmul, py::arg("a"), py::arg("b"));
  sub.def("fft2", [](const ta::Array& x, const py::object& axes) { return ta::fft2(x, fft_options(axes)); },
          py::arg("x"), py::arg("axes") = py::none());
  sub.def("rfft2", [](const ta::Array& x, const py::object& axes) { return ta::rfft2(x, fft_options(axes)); },
          py::arg("x"), py::arg("axes") = py::none());
}

}  // namespace tessera::python
