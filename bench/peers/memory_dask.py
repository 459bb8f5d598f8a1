"""dask's side of bench_memory: the same three workloads with dask's threaded
scheduler and no memory limit, each in this process; prints one JSON line:
{"workload": W, "peak_rss": bytes, "seconds": s, "correct": bool}.

Usage: memory_dask.py transpose|rechunk|tree SCALE WORKERS
Sizes follow bench/memory/memory_bench.cpp at the same SCALE.
"""
import json
import resource
import sys
import time

import dask
import dask.array as da
import numpy as np


def peak_rss():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def run(graph, keys, workers):
    return dask.threaded.get(graph, keys, num_workers=workers)


def main():
    workload, scale, workers = sys.argv[1], float(sys.argv[2]), int(sys.argv[3])
    start = time.perf_counter()
    if workload == "transpose":
        b = max(64, int(2048 * scale))
        n = 8 * b
        x = da.random.RandomState(1).random_sample((n, n), chunks=(b, b))
        z = x + x.T
        keys = [k for row in z.__dask_keys__() for k in row]
        blocks = run(dict(z.__dask_graph__()), keys, workers)
        rss = peak_rss()
        xs = float(x.sum().compute(scheduler="threads", num_workers=workers))
        correct = abs(sum(float(b_.sum()) for b_ in blocks) - 2 * xs) <= 1e-9 * abs(xs)
    elif workload == "rechunk":
        n = max(256, int(12288 * scale))
        b = n // 16
        x = da.random.RandomState(2).random_sample((n, n), chunks=(b, n))
        y = x.rechunk((n, b), block_size_limit=b * n * 8)
        keys = [k for row in y.__dask_keys__() for k in row]
        blocks = run(dict(y.__dask_graph__()), keys, workers)
        rss = peak_rss()
        xs = float(x.sum().compute(scheduler="threads", num_workers=workers))
        correct = abs(sum(float(b_.sum()) for b_ in blocks) - xs) <= 1e-9 * abs(xs)
    elif workload == "tree":
        count = max(4, int(24 * scale))
        x = da.random.RandomState(3).random_sample((count * 2048, 2048), chunks=(2048, 2048))
        s = x.sum()
        keys = [k for row in x.__dask_keys__() for k in row] + [s.__dask_keys__()[0] if isinstance(s.__dask_keys__(), list) else s.__dask_keys__()]
        graph = dict(s.__dask_graph__())
        out = run(graph, keys, workers)
        rss = peak_rss()
        total = float(out[-1])
        correct = abs(sum(float(b_.sum()) for b_ in out[:-1]) - total) <= 1e-9 * abs(total)
    else:
        raise SystemExit("unknown workload " + workload)
    print(json.dumps({"workload": workload, "peak_rss": rss, "seconds": time.perf_counter() - start,
                      "correct": bool(correct)}))


if __name__ == "__main__":
    main()
