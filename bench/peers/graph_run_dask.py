"""The dask side of `scripts/bench graphs`' whole-process timing: loads a
tessera-graph/1 file, builds the dask graph of synthetic tasks (each reads its
inputs and returns `nbytes` zero bytes, as `tessera graph run` does), and runs
it with dask.threaded.get. Prints one JSON line: {"tasks", "load_s", "run_s"}.

usage: graph_run_dask.py FILE.json WORKERS
"""
import json
import sys
import time


def as_key(k):
    return tuple(k) if isinstance(k, list) else k


def synthetic(nbytes, *inputs):
    """A task of the file: reads its inputs, returns `nbytes` zero bytes."""
    return bytes(nbytes)


def dask_graph(path):
    """The file's dask graph and its outputs. Every task calls the module-level
    `synthetic`, so that dask.distributed pickles a task as a reference to it
    (graphs_distributed.py imports this file as a module)."""
    with open(path) as f:
        doc = json.load(f)
    dsk = {}
    for t in doc["tasks"]:
        key, deps = as_key(t["key"]), [as_key(d) for d in t["deps"]]
        if t["func"] == "literal" and not deps:
            dsk[key] = bytes(t["nbytes"])
        elif t["func"] == "literal" and len(deps) == 1:
            dsk[key] = deps[0]
        else:
            dsk[key] = (synthetic, t["nbytes"]) + tuple(deps)
    return dsk, [as_key(k) for k in doc["outputs"]]


def main():
    path, workers = sys.argv[1], int(sys.argv[2])
    t0 = time.perf_counter()
    import dask.threaded
    dsk, outputs = dask_graph(path)
    t1 = time.perf_counter()
    dask.threaded.get(dsk, outputs, num_workers=workers)
    t2 = time.perf_counter()
    print(json.dumps({"tasks": len(dsk), "load_s": t1 - t0, "run_s": t2 - t1}))


if __name__ == "__main__":
    sys.exit(main())
