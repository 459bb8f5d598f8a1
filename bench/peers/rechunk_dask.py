"""dask's side of bench_rechunk: the in-memory rows-to-columns rechunk.

Builds a float64 array of ROWS x COLS in numpy, wraps it with da.from_array in
row blocks (BLOCK, COLS), rechunks it to column blocks (ROWS, BLOCK) and
computes the result into one numpy array with dask's threaded scheduler, for
each worker count; prints one JSON object per line:
{"peer": "dask", "workers": N, "seconds": best of REPEAT}.

Usage: rechunk_dask.py ROWS COLS BLOCK REPEAT WORKERS...
"""
import json
import sys
import time

import dask
import dask.array as da
import numpy as np


def main():
    rows, cols, block, repeat = (int(a) for a in sys.argv[1:5])
    workers = [int(w) for w in sys.argv[5:]]
    data = np.random.default_rng(0).random((rows, cols))
    x = da.from_array(data, chunks=(block, cols))
    y = x.rechunk((rows, block))
    for w in workers:
        best = float("inf")
        for _ in range(repeat):
            start = time.perf_counter()
            out = y.compute(scheduler="threads", num_workers=w)
            best = min(best, time.perf_counter() - start)
            assert out.shape == data.shape
            del out
        print(json.dumps({"peer": "dask", "version": dask.__version__, "workers": w, "seconds": best}), flush=True)


main()
