"""Scheduling overhead of tessera.get on dask graphs of tiny Python tasks.

Four graphs of about 100,000 tasks made by dask's constructors: a binary tree and
100 chains of 1,000 operator.add tasks (dask.delayed); "stencil", a 3-point 1-D
stencil y[i] = x[i-1] + x[i] + x[i+1] repeated 20 times over 1,000 one-element
blocks (dask.array slicing and element-wise addition on chunks=1: getitem tasks and
blockwise add tasks, each a few microseconds of numpy); and "overlap", dask.array's
map_overlap over 500 one-element blocks, repeated, whose task bodies (dask's
overlap getitem/concatenate/trim) are heavier, so its row is bound by the bodies.
dask's own preparation (collections_to_dsk, no optimization, so that nothing is
fused away) is done once and is the same for every scheduler; each row times the
scheduler's whole call on that graph — tessera's conversion of the graph
included — best of --repeat, with dask.threaded.get, dask.local.get_sync and
tessera.get side by side. "bodies" is the floor: the graph's task bodies alone, each
run by dask's _execute_task in a plain loop in topological order and timed one by one
(their sum, best of --repeat); "bound" is dask.threaded / bodies, the most any scheduler
that runs these bodies could be faster than dask.threaded. (tessera runs a
SubgraphCallable's inner graph compiled, not through its __call__, so its own body time
on dask.array graphs is below this floor.)
"""
import argparse
import operator
import time

import dask
import dask.array as da
from dask import delayed
from dask.base import collections_to_dsk
from dask.local import get_sync
from dask.threaded import get as threaded_get

import tessera


add = delayed(operator.add, pure=True)


def tree(n):
    level = [add(i, 1) for i in range(n // 2)]
    while len(level) > 1:
        level = [add(level[i], level[i + 1]) if i + 1 < len(level) else level[i] for i in range(0, len(level), 2)]
    return level[0]


def chains(n, length=1000):
    ends = []
    for c in range(n // length):
        x = c
        for _ in range(length):
            x = add(x, 1)
        ends.append(x)
    return delayed(sum)(ends)


def _same(block):
    return block


def stencil(n, width=1000):
    # y[i] = x[i-1] + x[i] + x[i+1] on one-element blocks: per step three slices (getitem
    # tasks, views of a block) and two blockwise adds, about 5 * width tasks; each step
    # is 2 blocks narrower. (dask.delayed makes a stencil's graph in time quadratic in
    # its depth, so dask.array is used here.)
    steps = max(1, n // (5 * width))
    x = da.arange(width + 2 * steps, chunks=1)
    for _ in range(steps):
        x = x[:-2] + x[1:-1] + x[2:]
    return x.sum()


def overlap(n, width=500):
    # dask.array's map_overlap (depth 1, no boundary) over one-element blocks, repeated:
    # about 3,500 getitem/concatenate/trim tasks per step, heavier bodies than the above.
    x = da.arange(width, chunks=1)
    for _ in range(max(1, n // (7 * width))):
        x = x.map_overlap(_same, depth=1, boundary="none")
    return x.sum()


def bodies(dsk, keys):
    """Seconds in the task bodies alone: each task of what `keys` need, run by
    _execute_task in topological order, timed one by one."""
    from dask.core import _execute_task, toposort
    from dask.optimization import cull

    needed, _ = cull(dsk, keys)
    cache, total = {}, 0.0
    for k in toposort(needed):
        t0 = time.perf_counter()
        cache[k] = _execute_task(needed[k], cache)
        total += time.perf_counter() - t0
    return total


def best(f, repeat):
    out, times = None, []
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = f()
        times.append(time.perf_counter() - t0)
    return min(times), out


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--tasks", type=int, default=100_000)
    p.add_argument("--repeat", type=int, default=3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--graphs", default="tree,chains,stencil,overlap")
    a = p.parse_args()
    schedulers = [
        ("dask.threaded", lambda d, k: threaded_get(d, k, num_workers=a.workers)),
        ("dask get_sync", lambda d, k: get_sync(d, k)),
        ("tessera.get", lambda d, k: tessera.get(d, k, num_workers=a.workers)),
    ]
    print(f"dask graphs of ~{a.tasks} tiny Python tasks, {a.workers} workers, best of {a.repeat}; "
          "seconds per get() on the prepared graph (tessera's conversion included)")
    print(f"{'graph':8} {'tasks':>7} " + " ".join(f"{n:>14}" for n, _ in schedulers)
          + f" {'vs threaded':>12} {'vs sync':>8} {'bodies':>7} {'bound':>6}")
    for name in a.graphs.split(","):
        make = {"tree": tree, "chains": chains, "stencil": stencil, "overlap": overlap}[name]
        x = make(a.tasks)
        dsk = dict(collections_to_dsk([x], optimize_graph=False))
        keys = x.__dask_keys__()
        ntasks = sum(1 for v in dsk.values() if dask.core.istask(v))
        secs, results = [], []
        for _, run in schedulers:
            s, r = best(lambda: run(dsk, keys), a.repeat)
            secs.append(s)
            results.append(r)
        assert all(repr(r) == repr(results[0]) for r in results), (name, [repr(r)[:80] for r in results])
        floor = min(bodies(dsk, keys if isinstance(keys, list) else [keys]) for _ in range(a.repeat))
        print(f"{name:8} {ntasks:7d} " + " ".join(f"{s:14.3f}" for s in secs)
              + f" {secs[0] / secs[2]:11.1f}x {secs[1] / secs[2]:7.1f}x {floor:7.3f} {secs[0] / floor:5.1f}x", flush=True)


if __name__ == "__main__":
    main()
