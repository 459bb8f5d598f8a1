// python/src/task_expr.hpp — a converted dask task as tessera runs it: its
// expression compiled once (convert.cpp compiles it from dask's graph) and
// evaluated by a worker under the GIL, calling Python by vectorcall, and its
// result held as the run's ResultPolicy says.
//
// What dask's _execute_task does, without looking at types again on every run:
// a literal, a key's value, a call, a list, or a call of a SubgraphCallable run
// from its compiled inner graph. evaluate() recurses as deep as the expression,
// which the compiler bounds by kMaxNesting.
#pragma once

#include <Python.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include <absl/container/inlined_vector.h>
#include <pybind11/pybind11.h>

#include "convert.hpp"
#include "pyvalue.hpp"
#include "tessera/graph/value.hpp"

namespace tessera::python {

// How deep tasks and lists may nest inside one task: the compiler and the
// evaluator recurse this deep at most.
constexpr int kMaxNesting = 1000;

struct Subgraph;

// A task's expression, compiled: what dask's _execute_task does, without
// looking at types again on every run.
struct Expr {
  // local: a value of the enclosing subgraph's frame; subgraph: a call of a
  // dask SubgraphCallable, run here from its compiled inner graph.
  enum class Kind : uint8_t { literal, dep, call, list, local, subgraph };
  Kind kind = Kind::literal;
  uint32_t dep = 0;                     // Kind::dep: position among the task's keys; Kind::local: frame slot
  PyObject* obj = nullptr;              // owned: the literal or the function
  std::vector<Expr> args;               // Kind::call, Kind::list, Kind::subgraph (the call's arguments)
  std::shared_ptr<const Subgraph> sub;  // Kind::subgraph

  Expr() = default;
  Expr(Kind k, PyObject* borrowed) : kind(k), obj(borrowed) { Py_XINCREF(obj); }
  Expr(Expr&& o) noexcept
      : kind(o.kind), dep(o.dep), obj(std::exchange(o.obj, nullptr)), args(std::move(o.args)), sub(std::move(o.sub)) {}
  Expr& operator=(Expr&&) = delete;
  Expr(const Expr&) = delete;
  ~Expr() {
    if (obj != nullptr) decref_anywhere(obj);
  }
};

// A SubgraphCallable's inner graph, compiled: what its __call__ (dask.core.get
// over the inner graph, the arguments bound to its inkeys) does. Slots 0..n-1
// of the frame are the n arguments; each step evaluates one inner key, in
// dask.core.toposort's order, into its slot; the result is slot `out`.
struct Subgraph {
  uint32_t slots = 0;
  uint32_t args = 0;
  std::vector<std::pair<uint32_t, Expr>> steps;
  uint32_t out = 0;
  int height = 0;  // levels that evaluating a call adds below the call
};

// Levels of evaluate() that `e` takes, nested subgraphs included (their heights
// are stored: the walk recurses only as deep as `e` itself, which compile bounded).
int height(const Expr& e);

// A frame of owned references (null: not evaluated), released on the way out.
class Frame {
 public:
  explicit Frame(size_t n) : slots_(n, nullptr) {}
  Frame(const Frame&) = delete;
  Frame& operator=(const Frame&) = delete;
  ~Frame() {
    for (PyObject* o : slots_) Py_XDECREF(o);
  }
  void set(size_t i, PyObject* owned) {
    Py_XDECREF(slots_[i]);
    slots_[i] = owned;
  }
  PyObject* const* data() const { return slots_.data(); }

 private:
  absl::InlinedVector<PyObject*, 8> slots_;
};

// Evaluates `e` with the task's key values `deps` and, inside a subgraph, its
// frame `locals` (GIL held). A new reference, or nullptr with the Python error
// set. Recursion as deep as the expression, subgraphs included: at most
// kMaxNesting levels (checked when compiled).
template <class Deps>
PyObject* evaluate(const Expr& e, const Deps& deps, PyObject* const* locals) {
  switch (e.kind) {
    case Expr::Kind::literal: Py_INCREF(e.obj); return e.obj;
    case Expr::Kind::dep: {
      PyObject* o = object_of(deps[e.dep]);
      Py_INCREF(o);
      return o;
    }
    case Expr::Kind::local: {
      PyObject* o = locals[e.dep];
      if (o == nullptr) {
        PyErr_SetString(PyExc_RuntimeError, "a SubgraphCallable's inner key was read before it was computed");
        return nullptr;
      }
      Py_INCREF(o);
      return o;
    }
    case Expr::Kind::list: {
      PyObject* l = PyList_New(static_cast<Py_ssize_t>(e.args.size()));
      if (l == nullptr) return nullptr;
      for (size_t i = 0; i < e.args.size(); ++i) {
        PyObject* x = evaluate(e.args[i], deps, locals);
        if (x == nullptr) {
          Py_DECREF(l);
          return nullptr;
        }
        PyList_SET_ITEM(l, static_cast<Py_ssize_t>(i), x);
      }
      return l;
    }
    case Expr::Kind::subgraph: {
      const Subgraph& g = *e.sub;
      Frame frame(g.slots);
      for (size_t i = 0; i < e.args.size(); ++i) {
        PyObject* v = evaluate(e.args[i], deps, locals);
        if (v == nullptr) return nullptr;
        frame.set(i, v);
      }
      for (const auto& [slot, step] : g.steps) {
        PyObject* v = evaluate(step, deps, frame.data());
        if (v == nullptr) return nullptr;
        frame.set(slot, v);
      }
      PyObject* r = frame.data()[g.out];
      Py_INCREF(r);
      return r;
    }
    case Expr::Kind::call: {
      absl::InlinedVector<PyObject*, 8> a;
      a.reserve(e.args.size());
      PyObject* r = nullptr;
      bool ok = true;
      for (const Expr& x : e.args) {
        PyObject* v = evaluate(x, deps, locals);
        if (v == nullptr) {
          ok = false;
          break;
        }
        a.push_back(v);
      }
      if (ok) r = PyObject_Vectorcall(e.obj, a.data(), a.size(), nullptr);
      for (PyObject* v : a) Py_DECREF(v);
      return r;
    }
  }
  return nullptr;
}

//! Wraps a task's result (a new reference, taken) as the run's policy says.
Value hold_result(PyObject* r, const ResultPolicy& policy, PyObject* key);

// The body of one converted task: evaluates its expression under the GIL.
struct PyTask {
  std::shared_ptr<const Expr> expr;
  std::shared_ptr<const ResultPolicy> policy;
  PyObject* key;  // borrowed: Converted::keys holds it
  template <class Deps>
  Value operator()(const Deps& deps) const {
    WorkerGil gil;
    release_deferred();
    PyObject* r = evaluate(*expr, deps, nullptr);
    if (r == nullptr) throw pybind11::error_already_set();
    return hold_result(r, *policy, key);
  }
};

}  // namespace tessera::python
