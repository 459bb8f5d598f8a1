"""Peers of bench/array/run.sh: the sum of the same data with numpy and dask.

Usage: /usr/bin/python3 array_sum.py make NPY ZARR GIB   (writes the data)
       /usr/bin/python3 array_sum.py numpy NPY REPEATS
       /usr/bin/python3 array_sum.py dask ZARR REPEATS WORKERS
Prints one line per measurement in the form tessera's bench prints.
"""
import statistics
import sys
import time

import numpy as np


def make(npy, zarr_path, gib):
    import zarr
    cols = 16384
    rows = int(gib * 2**30) // (8 * cols)
    out = np.lib.format.open_memmap(npy, mode="w+", dtype=np.float64, shape=(rows, cols))
    rng = np.random.default_rng(0)
    step = 1024
    # Uncompressed zarr chunks of 128 MiB, the size tessera's "auto" picks too.
    z = zarr.open(zarr_path, mode="w", shape=(rows, cols), chunks=(step, cols), dtype="<f8", compressor=None)
    for r in range(0, rows, step):
        block = rng.random((min(step, rows - r), cols))
        out[r:r + step] = block
        z[r:r + step] = block
    out.flush()
    del out


def timed(fn, repeats):
    """Best and median wall time, least CPU time (user + system) of a run, last value."""
    times, cpu, value = [], [], None
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        value = fn()
        times.append(time.perf_counter() - t0)
        cpu.append(time.process_time() - c0)
    return min(times), statistics.median(times), min(cpu), value


def main():
    what = sys.argv[1]
    if what == "make":
        make(sys.argv[2], sys.argv[3], float(sys.argv[4]))
    elif what == "numpy":
        path, repeats = sys.argv[2], int(sys.argv[3])
        best, med, cpu, s = timed(lambda: float(np.load(path, mmap_mode="r").sum()), repeats)
        print(f"numpy workers=1 best={best:.6f} median={med:.6f} cpu={cpu:.6f} sum={s!r}")
    elif what == "dask":
        import dask
        import dask.array as da
        path, repeats, workers = sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
        with dask.config.set(scheduler="threads", num_workers=workers):
            best, med, cpu, s = timed(lambda: float(da.from_zarr(path).sum().compute()), repeats)
        print(f"dask workers={workers} best={best:.6f} median={med:.6f} cpu={cpu:.6f} sum={s!r}")


if __name__ == "__main__":
    main()
