"""The overhead benchmark's dask peer: dask.threaded.get on the same DAGs as tessera.

bench_overhead writes each DAG as a tessera-graph/1 file (bench/overhead/dags.cpp)
and runs this script with /usr/bin/python3 (Debian's python3-dask). For each file it
prints one JSON line:

  {"name": ..., "tasks": n, "run_s": best seconds of dask.threaded.get on the built
   graph, "e2e_s": build the dict + cull + dask.threaded.get, "checksum": sum of outputs}

dask.threaded.get orders the graph itself (dask.local.get_async calls dask.order),
so "run" includes dask's order, as a user calling it pays it.

usage: overhead_dask.py --workers W --repeat R FILE...
"""
import argparse
import json
import sys
import time

import dask
import dask.threaded
from dask.optimization import cull


def inc(x):
    return x + 1


def add(a, b):
    return a + b


def mean3(a, b, c):
    return (a + b + c) // 3


def as_key(k):
    return tuple(k) if isinstance(k, list) else k


def load(path):
    """The file's tasks as (key, deps) and its outputs; not timed."""
    with open(path) as f:
        doc = json.load(f)
    tasks = [(as_key(t["key"]), [as_key(d) for d in t["deps"]]) for t in doc["tasks"]]
    return doc["name"], tasks, [as_key(k) for k in doc["outputs"]]


def build(tasks):
    """The dask graph: what a user's code would build (mirrors build_graph in C++)."""
    dsk = {}
    for position, (key, deps) in enumerate(tasks):
        if not deps:
            dsk[key] = (inc, position)
        elif len(deps) == 1:
            dsk[key] = (inc, deps[0])
        elif len(deps) == 2:
            dsk[key] = (add, deps[0], deps[1])
        else:
            dsk[key] = (mean3, deps[0], deps[1], deps[2])
    return dsk


def best_of(repeat, fn):
    best, result = float("inf"), None
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - t0)
    return best, result


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--workers", type=int, default=2)
    ap.add_argument("--repeat", type=int, default=2)
    ap.add_argument("files", nargs="+")
    args = ap.parse_args()
    for path in args.files:
        name, tasks, outputs = load(path)
        dsk = build(tasks)

        def run():
            return dask.threaded.get(dsk, outputs, num_workers=args.workers)

        def end_to_end():
            graph = build(tasks)
            graph, _ = cull(graph, outputs)
            return dask.threaded.get(graph, outputs, num_workers=args.workers)

        run_s, results = best_of(args.repeat, run)
        e2e_s, _ = best_of(1, end_to_end)
        print(json.dumps({"name": name, "tasks": len(tasks), "run_s": run_s, "e2e_s": e2e_s,
                          "checksum": sum(results), "dask": dask.__version__}), flush=True)


if __name__ == "__main__":
    sys.exit(main())
