"""The on-disk side of bench/rechunk/run.sh.

  rechunk_disk.py make SRC ROWS COLS BLOCK   a float64 zarr (no compressor) in row chunks (BLOCK, COLS)
  rechunk_disk.py dask SRC DST BLOCK WORKERS da.from_zarr(SRC).rechunk((-1, BLOCK)).to_zarr(DST)
  rechunk_disk.py measure NAME CMD...        runs CMD; prints NAME seconds=S peak_rss_mib=M
  rechunk_disk.py check SRC DST BLOCK        DST equals SRC, in column chunks (ROWS, BLOCK)
"""
import resource
import subprocess
import sys
import time

import numpy as np
import zarr


def make(src, rows, cols, block):
    z = zarr.open(src, mode="w", shape=(rows, cols), chunks=(block, cols), dtype="f8", compressor=None)
    rng = np.random.default_rng(0)
    for r in range(0, rows, block):
        z[r:r + block] = rng.random((min(block, rows - r), cols))


def dask_rechunk(src, dst, block, workers):
    import dask.array as da
    x = da.from_zarr(src)
    x.rechunk((x.shape[0], block)).to_zarr(dst, compressor=None, compute=False).compute(
        scheduler="threads", num_workers=workers)


def measure(name, cmd):
    start = time.perf_counter()
    rc = subprocess.run(cmd).returncode
    seconds = time.perf_counter() - start
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if rc != 0:
        sys.exit(f"{name}: {' '.join(cmd)} failed with status {rc}")
    print(f"{name} seconds={seconds:.3f} peak_rss_mib={peak:.0f}", flush=True)


def check(src, dst, block):
    a, b = zarr.open(src, mode="r"), zarr.open(dst, mode="r")
    assert b.chunks == (a.shape[0], block), f"{dst} has chunks {b.chunks}"
    for c in range(0, a.shape[1], 8 * block):
        assert np.array_equal(a[:, c:c + 8 * block], b[:, c:c + 8 * block]), f"{dst} differs in columns {c}+"


def main():
    cmd, *args = sys.argv[1:]
    if cmd == "make":
        make(args[0], *map(int, args[1:4]))
    elif cmd == "dask":
        dask_rechunk(args[0], args[1], int(args[2]), int(args[3]))
    elif cmd == "measure":
        measure(args[0], args[1:])
    elif cmd == "check":
        check(args[0], args[1], int(args[2]))
    else:
        sys.exit(__doc__)


main()
