#!/usr/bin/python3
"""Write a dask collection's task graph as a tessera-graph/1 file (docs/graph-format.md).

Run it with the Python that has dask (here /usr/bin/python3). The collection is
given as a Python expression, evaluated with `dask`, `da` (dask.array), `db`
(dask.bag), `dd` (dask.dataframe, when importable) and `np` in scope, or as
`module:function`, a function without arguments that returns the collection:

  /usr/bin/python3 tools/export_dask_graph.py 'da.random.random((400, 400), chunks=25).sum()' -o tree_sum.json
  /usr/bin/python3 tools/export_dask_graph.py mypkg.graphs:make_array --name mine -o mine.json

The graph written is the collection's own graph, as tests/data/graphs hold it
(`collections_to_dsk(..., optimize_graph=False)`: blockwise layers are
SubgraphCallable tasks, nothing fused); with --optimize, the graph after dask's
optimizations, as `dask.compute` runs it. The file records, for each key,
the keys it reads, the name of its function (`literal` for data and for a value
that only names other keys), and the size of its result, measured by running
the graph with dask's synchronous scheduler (`dask.sizeof`). The same run gives
`sync_max_held` and `sync_max_held_bytes`; `dask.order` gives `dask_order` and,
through `dask.order.diagnostics`, `order_max_pressure`. Nothing is written
unless the run succeeds; the file appears complete or not at all (written under
a temporary name in its folder, then renamed).
"""
import argparse
import importlib
import json
import os
import sys
import tempfile

import dask
import dask.array as da
import dask.bag as db
import numpy as np
from dask.base import collections_to_dsk
from dask.callbacks import Callback
from dask.core import get_dependencies, istask
from dask.local import get_sync
from dask.order import diagnostics, order
from dask.sizeof import sizeof


def load_collection(spec):
    """The collection `spec` names: `module:function` or a Python expression."""
    module, sep, function = spec.partition(":")
    if sep and module.replace(".", "").replace("_", "").isalnum() and function.isidentifier():
        return getattr(importlib.import_module(module), function)()
    scope = {"dask": dask, "da": da, "db": db, "np": np}
    try:
        import dask.dataframe as dd
        scope["dd"] = dd
    except ImportError:
        pass
    return eval(spec, scope)  # the user's own expression, as a REPL would run it


def key_json(key):
    """A key as the format writes it: a string, or [name, i, ...] for a tuple."""
    return list(key) if isinstance(key, tuple) else key


def flatten_keys(keys):
    """A collection's __dask_keys__ (nested lists) as one list."""
    out = []
    stack = [keys]
    while stack:
        item = stack.pop()
        if isinstance(item, list):
            stack.extend(reversed(item))
        else:
            out.append(item)
    return out


def func_name(task):
    """The name of a task's callable: a function's name, else its type's."""
    func = task[0]
    name = getattr(func, "__name__", None)
    return name if isinstance(name, str) else type(func).__name__


class Measure(Callback):
    """Sizes of results and what get_sync holds after each task (its posttask
    hook runs once the task's released inputs have left the cache)."""

    def __init__(self, data_keys):
        super().__init__()
        self.data_keys = data_keys
        self.nbytes = {}
        self.held = {}  # task results in the cache now: key -> size
        self.max_held = 0
        self.max_held_bytes = 0
        self.held_bytes = 0

    def _posttask(self, key, result, dsk, state, worker_id):
        size = int(sizeof(result))
        self.nbytes[key] = size
        cache = state["cache"]
        self.held[key] = size
        self.held_bytes += size
        # Results finish_task released are no longer in the cache.
        for k in [k for k in self.held if k not in cache]:
            self.held_bytes -= self.held.pop(k)
        self.max_held = max(self.max_held, len(self.held))
        self.max_held_bytes = max(self.max_held_bytes, self.held_bytes)


def export(collection, name, source, optimize=False):
    dsk = dict(collections_to_dsk([collection], optimize_graph=optimize))
    outputs = flatten_keys(collection.__dask_keys__())
    deps = {k: get_dependencies(dsk, k) for k in dsk}
    data_keys = {k for k, v in dsk.items() if not istask(v) and not deps[k]}

    measure = Measure(data_keys)
    get_sync(dsk, outputs, callbacks=[measure._callback])
    missing = [k for k in dsk if k not in data_keys and k not in measure.nbytes]
    if missing:
        raise SystemExit("export_dask_graph: dask did not run %d keys of the graph, e.g. %r" % (len(missing), missing[0]))

    tasks = []
    for key, value in dsk.items():
        if key in data_keys:
            func, size = "literal", int(sizeof(value))
        else:
            func = func_name(value) if istask(value) else "literal"
            size = measure.nbytes[key]
        tasks.append({"key": key_json(key), "deps": [key_json(d) for d in sorted(deps[key], key=str)],
                      "func": func, "nbytes": size})
    priorities = order(dsk)
    _, pressure = diagnostics(dsk, o=priorities)
    return {
        "format": "tessera-graph/1",
        "name": name,
        "source": source,
        "tasks": tasks,
        "outputs": [key_json(k) for k in outputs],
        "reference": {
            "tool": "dask " + dask.__version__,
            "dask_order": {json.dumps(key_json(k)): int(p) for k, p in priorities.items()},
            "order_max_pressure": int(max(pressure, default=0)),
            "sync_max_held": measure.max_held,
            "sync_max_held_bytes": measure.max_held_bytes,
        },
    }


def write_atomically(doc, path):
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix="." + os.path.basename(path) + ".tmp-", dir=folder)
    try:
        with os.fdopen(fd, "w") as f:
            json.dump(doc, f)
            f.flush()
            os.fsync(f.fileno())
        os.replace(tmp, path)
    except BaseException:
        os.unlink(tmp)
        raise


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("collection", help="a Python expression, or module:function returning a dask collection")
    ap.add_argument("-o", "--output", required=True, help="the tessera-graph/1 file to write")
    ap.add_argument("--name", help="the graph's name (default: the output file's stem)")
    ap.add_argument("--optimize", action="store_true",
                    help="export the graph after dask's optimizations (fused tasks), as dask.compute runs it")
    args = ap.parse_args(argv)
    collection = load_collection(args.collection)
    if not dask.is_dask_collection(collection):
        raise SystemExit("export_dask_graph: expected a dask collection from %r, found %s"
                         % (args.collection[:60], type(collection).__name__))
    name = args.name or os.path.splitext(os.path.basename(args.output))[0]
    write_atomically(export(collection, name, args.collection, args.optimize), args.output)
    return 0


if __name__ == "__main__":
    sys.exit(main())
