// python/src/convert.cpp — dask's graph spec as a tessera Graph (convert.hpp says how).
#include "convert.hpp"

#include <algorithm>
#include <span>
#include <string>
#include <string_view>
#include <utility>

#include <absl/container/flat_hash_map.h>
#include <absl/container/inlined_vector.h>
#include <absl/strings/str_cat.h>
#include <pybind11/numpy.h>

#include "pyvalue.hpp"
#include "task_expr.hpp"
#include "tessera/graph/task.hpp"

namespace py = pybind11;

namespace tessera::python {

namespace {

// Names of Keys made for keys that are neither a str nor a (str, int...) tuple
// start with this byte; a str key that starts with it goes the same way.
constexpr char kReserved = '\x1f';

bool is_task(PyObject* o) {
  return PyTuple_CheckExact(o) && PyTuple_GET_SIZE(o) > 0 && PyCallable_Check(PyTuple_GET_ITEM(o, 0)) != 0;
}

// True when `o` is of a type that cannot be hashed, or a tuple with an item of
// one (dask.array's getitem indices: `(slice(...), ...)`): found without raising
// the TypeError that hashing it would raise and clear, once per such argument.
bool unhashable(PyObject* o) {
  const auto no_hash = [](PyObject* x) { return Py_TYPE(x)->tp_hash == PyObject_HashNotImplemented; };
  if (no_hash(o)) return true;
  if (!PyTuple_CheckExact(o)) return false;
  const Py_ssize_t n = PyTuple_GET_SIZE(o);
  for (Py_ssize_t i = 0; i < n; ++i) {
    if (no_hash(PyTuple_GET_ITEM(o, i))) return true;
  }
  return false;
}

// True when `o` is hashable and a key of `dsk` (as dask's _execute_task decides).
bool is_key_of(PyObject* o, PyObject* dsk) {
  if (unhashable(o)) return false;
  if (PyObject_Hash(o) == -1) {
    PyErr_Clear();
    return false;
  }
  const int found = PyDict_Contains(dsk, o);
  if (found < 0) throw py::error_already_set();
  return found == 1;
}

// A task's name for messages and profiles: the function's __name__, else its type's.
std::string function_name(PyObject* f) {
  PyObject* name = PyObject_GetAttrString(f, "__name__");
  if (name == nullptr) {
    PyErr_Clear();
    return Py_TYPE(f)->tp_name;
  }
  std::string out;
  if (PyUnicode_Check(name)) {
    Py_ssize_t n = 0;
    const char* s = PyUnicode_AsUTF8AndSize(name, &n);
    if (s != nullptr) out.assign(s, static_cast<size_t>(n));
  }
  Py_DECREF(name);
  PyErr_Clear();
  return out.empty() ? std::string(Py_TYPE(f)->tp_name) : out;
}

// The SubgraphCallables of one conversion, each compiled once (dask.array's
// blockwise layers share one among all their blocks): null for one that is left
// to its own __call__ (one whose call raises there, as dask's does).
class Subgraphs {
 public:
  // The compiled inner graph of `f` when `f` is a SubgraphCallable called with
  // `nargs` arguments that can be compiled; else null. `compile(o, slots)`
  // compiles an inner value with `slots` (a dict: inner key -> frame slot).
  template <class Compile>
  std::shared_ptr<const Subgraph> find(PyObject* f, size_t nargs, Compile&& compile) {
    if (!loaded_) load();
    if (type_ == nullptr || Py_TYPE(f) != type_) return nullptr;
    auto it = compiled_.find(f);
    if (it == compiled_.end()) {
      // Null while it compiles: one that calls itself inside runs its own __call__.
      // (Building may add others: no iterator is held across it.)
      compiled_.emplace(f, nullptr);
      std::shared_ptr<const Subgraph> g = build(f, compile);
      it = compiled_.find(f);
      it->second = std::move(g);
    }
    if (it->second && it->second->args != nargs) return nullptr;
    return it->second;
  }

 private:
  void load() {
    loaded_ = true;
    // Only a program that imported dask.optimization can hold its SubgraphCallables.
    py::object module = py::reinterpret_steal<py::object>(PyImport_GetModule(py::str("dask.optimization").ptr()));
    if (!module || module.is_none()) {
      PyErr_Clear();
      return;
    }
    py::object t = py::getattr(module, "SubgraphCallable", py::none());
    py::object core = py::module_::import("dask.core");
    if (!PyType_Check(t.ptr())) return;
    type_ = reinterpret_cast<PyTypeObject*>(t.ptr());
    type_ref_ = t;
    toposort_ = core.attr("toposort");
  }

  template <class Compile>
  std::shared_ptr<const Subgraph> build(PyObject* f, Compile& compile) {
    py::handle fn(f);
    py::object inner = py::getattr(fn, "dsk", py::none());
    py::object outkey = py::getattr(fn, "outkey", py::none());
    py::object inkeys = py::getattr(fn, "inkeys", py::none());
    if (!PyDict_Check(inner.ptr()) || !(PyTuple_Check(inkeys.ptr()) || PyList_Check(inkeys.ptr()))) return nullptr;
    if (PyObject_Hash(outkey.ptr()) == -1) {
      PyErr_Clear();
      return nullptr;
    }
    if (PyDict_Contains(inner.ptr(), outkey.ptr()) != 1) {
      PyErr_Clear();
      return nullptr;
    }
    auto g = std::make_shared<Subgraph>();
    py::dict slots;  // as dict(zip(inkeys, args)): a repeated inkey is its last argument
    const py::sequence in = py::reinterpret_borrow<py::sequence>(inkeys);
    for (size_t i = 0; i < in.size(); ++i) {
      py::object k = in[i];
      if (PyObject_Hash(k.ptr()) == -1) {
        PyErr_Clear();
        return nullptr;
      }
      slots[k] = py::int_(i);
    }
    g->args = static_cast<uint32_t>(in.size());
    py::list order;
    try {
      order = py::list(toposort_(inner));
    } catch (py::error_already_set&) {
      return nullptr;  // a cycle: its own __call__ raises dask's error
    }
    uint32_t next = g->args;
    for (py::handle k : order) {
      if (!slots.contains(k)) slots[k] = py::int_(next++);
    }
    g->slots = next;
    g->steps.reserve(order.size());
    for (py::handle k : order) {
      g->steps.emplace_back(slots[k].cast<uint32_t>(), compile(PyDict_GetItem(inner.ptr(), k.ptr()), slots.ptr()));
    }
    g->out = slots[outkey].cast<uint32_t>();
    for (const auto& step : g->steps) g->height = std::max(g->height, height(step.second));
    return g;
  }

  bool loaded_ = false;
  PyTypeObject* type_ = nullptr;
  py::object type_ref_;
  py::object toposort_;
  absl::flat_hash_map<PyObject*, std::shared_ptr<const Subgraph>> compiled_;  // borrowed keys: dsk holds them
};

// Compiles one task's value: collects the keys it reads (each once) as it goes.
class Compiler {
 public:
  Compiler(PyObject* dsk, KeyMap& keys, const py::handle& owner, Subgraphs& subgraphs)
      : dsk_(dsk), keys_(keys), owner_(owner), subgraphs_(subgraphs) {}

  // `locals`: inside a SubgraphCallable, its keys -> frame slots (a dict); null outside.
  Expr compile(PyObject* o, int depth, PyObject* locals = nullptr) {
    if (depth > kMaxNesting) too_deep();
    if (is_task(o)) {
      PyObject* f = PyTuple_GET_ITEM(o, 0);
      const Py_ssize_t n = PyTuple_GET_SIZE(o);
      auto sub = subgraphs_.find(f, static_cast<size_t>(n - 1),
                                 [&](PyObject* v, PyObject* slots) { return compile(v, depth + 1, slots); });
      // A subgraph compiled at a shallower call site may be too deep here.
      if (sub && depth + sub->height > kMaxNesting) too_deep();
      Expr e(sub ? Expr::Kind::subgraph : Expr::Kind::call, sub ? nullptr : f);
      e.sub = std::move(sub);
      e.args.reserve(static_cast<size_t>(n - 1));
      for (Py_ssize_t i = 1; i < n; ++i) e.args.push_back(compile(PyTuple_GET_ITEM(o, i), depth + 1, locals));
      return e;
    }
    if (PyList_Check(o)) {
      Expr e(Expr::Kind::list, nullptr);
      const Py_ssize_t n = PyList_GET_SIZE(o);
      e.args.reserve(static_cast<size_t>(n));
      for (Py_ssize_t i = 0; i < n; ++i) e.args.push_back(compile(PyList_GET_ITEM(o, i), depth + 1, locals));
      return e;
    }
    if (locals != nullptr) {
      // As dask.core.get's _execute_task: a hashable value that is an inner key is its value.
      if (is_key_of(o, locals)) {
        Expr e(Expr::Kind::local, nullptr);
        e.dep = static_cast<uint32_t>(PyLong_AsUnsignedLong(PyDict_GetItem(locals, o)));
        return e;
      }
      return Expr(Expr::Kind::literal, o);
    }
    if (is_key_of(o, dsk_)) {
      Expr e(Expr::Kind::dep, nullptr);
      e.dep = slot_of(keys_(o));
      return e;
    }
    return Expr(Expr::Kind::literal, o);
  }

  [[noreturn]] void too_deep() const {
    throw py::value_error(absl::StrCat("the task of key ", py::repr(owner_).cast<std::string>().substr(0, 120),
                                       " nests tasks and lists more than ", kMaxNesting,
                                       " levels deep; put inner levels in tasks of their own"));
  }

  std::vector<Arg> take_refs() {
    std::vector<Arg> refs;
    refs.reserve(deps_.size());
    for (Key& k : deps_) refs.emplace_back(ref(std::move(k)));
    return refs;
  }

 private:
  // Position of `k` among the task's keys, added when new: a scan for the few
  // keys most tasks read, a hash map past that.
  uint32_t slot_of(Key k) {
    static constexpr size_t kScanLimit = 16;
    const auto next = static_cast<uint32_t>(deps_.size());
    if (next < kScanLimit) {
      for (uint32_t i = 0; i < next; ++i) {
        if (deps_[i] == k) return i;
      }
    } else {
      if (index_.empty()) {
        for (uint32_t i = 0; i < next; ++i) index_.emplace(deps_[i], i);
      }
      auto [it, inserted] = index_.try_emplace(k, next);
      if (!inserted) return it->second;
    }
    deps_.push_back(std::move(k));
    return next;
  }

  PyObject* dsk_;
  KeyMap& keys_;
  const py::handle& owner_;
  Subgraphs& subgraphs_;
  std::vector<Key> deps_;
  absl::flat_hash_map<Key, uint32_t> index_;
};

// The UTF-8 text of a str, or false when it has none (lone surrogates).
bool utf8_of(PyObject* s, std::string_view& out) {
  Py_ssize_t n = 0;
  const char* p = PyUnicode_AsUTF8AndSize(s, &n);
  if (p == nullptr) {
    PyErr_Clear();
    return false;
  }
  out = std::string_view(p, static_cast<size_t>(n));
  return true;
}

// Appends the integer that `x` equals in a dict's eyes (an int, a numpy integer,
// an integral float: ('x', np.int64(0)) and ('x', 0.0) are the key ('x', 0));
// false for anything else or past int64.
bool index_of(PyObject* x, absl::InlinedVector<int64_t, 4>& index) {
  if (PyFloat_Check(x)) {
    const double d = PyFloat_AS_DOUBLE(x);
    if (!(d >= -9.2e18 && d <= 9.2e18) || d != static_cast<double>(static_cast<int64_t>(d))) return false;
    index.push_back(static_cast<int64_t>(d));
    return true;
  }
  if (!PyLong_Check(x) && !PyIndex_Check(x)) return false;
  PyObject* as_int = PyNumber_Index(x);
  if (as_int == nullptr) {
    PyErr_Clear();
    return false;
  }
  int overflow = 0;
  const long long v = PyLong_AsLongLongAndOverflow(as_int, &overflow);
  Py_DECREF(as_int);
  if (overflow != 0 || (v == -1 && PyErr_Occurred() != nullptr)) {
    PyErr_Clear();
    return false;
  }
  index.push_back(v);
  return true;
}

}  // namespace

Key KeyMap::operator()(py::handle k) {
  PyObject* o = k.ptr();
  std::string_view name;
  if (PyUnicode_CheckExact(o)) {
    if (utf8_of(o, name) && (name.empty() || name[0] != kReserved)) return Key(name);
  } else if (PyTuple_CheckExact(o) && PyTuple_GET_SIZE(o) >= 1 && PyUnicode_CheckExact(PyTuple_GET_ITEM(o, 0)) &&
             utf8_of(PyTuple_GET_ITEM(o, 0), name) && (name.empty() || name[0] != kReserved)) {
    absl::InlinedVector<int64_t, 4> index;
    const Py_ssize_t n = PyTuple_GET_SIZE(o);
    bool ints = true;
    for (Py_ssize_t i = 1; i < n && ints; ++i) {
      ints = index_of(PyTuple_GET_ITEM(o, i), index);
    }
    if (ints) return Key(name, std::span<const int64_t>(index.data(), index.size()));
  }
  // Any other hashable key: a number of its own in this conversion.
  PyObject* known = PyDict_GetItemWithError(others_.ptr(), o);
  if (known == nullptr && PyErr_Occurred() != nullptr) throw py::error_already_set();
  size_t id = 0;
  if (known != nullptr) {
    id = PyLong_AsSize_t(known);
  } else {
    id = static_cast<size_t>(PyDict_Size(others_.ptr()));
    others_[k] = py::int_(id);
  }
  return Key(absl::StrCat(absl::string_view(&kReserved, 1), id));
}

py::handle Converted::python_key(const Key& k) const {
  const auto id = graph.index_of(k);
  return id ? keys[*id] : py::handle(py::none());
}

Converted convert(const py::dict& dsk, KeyMap& keys, std::shared_ptr<const ResultPolicy> policy) {
  Converted out;
  out.graph.reserve(dsk.size());
  // Most graphs call a few functions many times: name each once in a row.
  std::string name;
  PyObject* named = nullptr;
  Subgraphs subgraphs;
  for (auto [k, v] : dsk) {
    Key key = keys(k);
    PyObject* o = v.ptr();
    if (is_task(o) || PyList_Check(o)) {
      Compiler c(dsk.ptr(), keys, k, subgraphs);
      auto expr = std::make_shared<const Expr>(c.compile(o, 0));
      PyObject* f = is_task(o) ? PyTuple_GET_ITEM(o, 0) : nullptr;
      if (f == nullptr) {
        name = "list";
      } else if (f != named) {
        name = function_name(f);
      }
      named = f;  // borrowed: dsk holds it for the whole conversion
      out.graph.put(key, Task::from_args(fn(name, PyTask{std::move(expr), policy, k.ptr()}), c.take_refs()));
    } else if (is_key_of(o, dsk.ptr())) {
      out.graph.alias(key, keys(v));
    } else {
      Py_INCREF(o);
      out.graph.put(key, Value::make<PyValue>(o, size_t{0}));
    }
    out.keys.append(k);
  }
  return out;
}

Keys convert_request(py::handle request, KeyMap& keys) {
  if (!PyList_Check(request.ptr())) return Keys(keys(request));
  std::vector<Keys> items;
  items.reserve(PyList_GET_SIZE(request.ptr()));
  for (py::handle item : py::reinterpret_borrow<py::list>(request)) items.push_back(convert_request(item, keys));
  return Keys(std::move(items));
}

}  // namespace tessera::python
