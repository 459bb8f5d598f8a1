// python/src/convert.hpp — dask's graph spec (a dict of Python objects) as a tessera Graph.
//
// Converted once per run, with the GIL held:
//   - keys: a str is the Key of that name, a tuple of a str and ints (dask.array's
//     blocks) the Key `(name, i, j, ...)`; any other hashable key gets a Key of a
//     reserved name (`\x1f` and a number) from a table of this conversion;
//   - values, as dask's `_execute_task` reads them: a tuple whose first item is
//     callable is a task; a list is a task that builds the list; a hashable value
//     that is a key of the graph is an alias; anything else is a literal;
//   - inside a task, an argument is a nested task, a list (evaluated item by item),
//     a key of the graph (its value), or a literal passed as it is.
// A task becomes one tessera Task that reads its distinct keys; its body is the
// task's expression compiled to a small tree (PyTask, task_expr.hpp) that the worker evaluates
// under the GIL, calling the Python functions by vectorcall. A call of a dask
// SubgraphCallable (dask.array's blockwise tasks) is compiled with its inner
// graph: the arguments bound to its inkeys, its inner keys evaluated in
// dask.core.toposort's order, as its __call__ (dask.core.get) would.
#pragma once

#include <pybind11/pybind11.h>

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "tessera/graph/graph.hpp"
#include "tessera/graph/key.hpp"
#include "tessera/scheduler/keys.hpp"

namespace tessera::python {

//! How the results of a run are held: their size (when a memory limit is set,
//! else nothing is measured) and whether large ones may spill.
struct ResultPolicy {
  //! None: results count 0 bytes. Else called with each result and its key, it
  //! returns the object to hold (the result, or a compact copy of a numpy view),
  //! its bytes, and whether it may spill (tessera/_get.py's _held).
  pybind11::object hold_fn;
  size_t spill_threshold = 65536;  //!< results at least this large get a Spillable form
};

//! A dask graph converted: the Graph and, for each of its node ids, the Python key.
struct Converted {
  Graph graph;
  pybind11::list keys;  //!< graph id -> Python key
  //! The Python key of the Graph's key `k` (which must be one of its keys).
  pybind11::handle python_key(const Key& k) const;
};

//! Maps Python keys to tessera Keys for one conversion (see the file comment).
class KeyMap {
 public:
  //! The Key of Python key `k` (hashable).
  Key operator()(pybind11::handle k);

 private:
  pybind11::dict others_;  // keys of other kinds -> their number
};

//! Converts `dsk` (a dict). Results are held as `policy` says; the policy must
//! outlive every run of the returned graph.
Converted convert(const pybind11::dict& dsk, KeyMap& keys, std::shared_ptr<const ResultPolicy> policy);

//! A request (a key, or nested lists of keys) as Keys.
Keys convert_request(pybind11::handle request, KeyMap& keys);

}  // namespace tessera::python
