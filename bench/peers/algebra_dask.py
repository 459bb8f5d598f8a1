"""dask's side of bench/algebra/run.sh: the operations bench_algebra times, on
the same inputs, with dask's threaded scheduler.

Usage: /usr/bin/python3 algebra_dask.py SCALE REPEATS WORKERS [MATMUL_REPEATS]
Prints one line per operation in bench_algebra's form:
  matmul dask best=... median=... check=...
Inputs are persisted first (contiguous blocks in memory), so the timing covers
the operation and the assembly of its result by compute(), as tessera's does.
numpy's BLAS is held to one thread: dask runs WORKERS block products at once.
MATMUL_REPEATS (default 1; 0 skips it) bounds the matmul's runs: Debian's numpy uses the
reference BLAS, whose 8192^2 product takes minutes.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import statistics  # noqa: E402
import sys  # noqa: E402
import time  # noqa: E402

import dask  # noqa: E402
import dask.array as da  # noqa: E402
import numpy as np  # noqa: E402


def formula(n, dtype):
    """x[i, j] = ((7919 i + 104729 j) mod 1009) / 1009, as bench_algebra fills its inputs."""
    i = np.arange(n, dtype=np.int64)[:, None]
    j = np.arange(n, dtype=np.int64)[None, :]
    return (((i * 7919 + j * 104729) % 1009) / 1009.0).astype(dtype)


def persisted(n, block, dtype):
    a = formula(n, dtype)
    # from_array's blocks are views of `a`; copies make them contiguous, as tessera's are.
    return da.from_array(a, chunks=block).map_blocks(np.ascontiguousarray).persist()


def mean3x3(b):
    """The 3 x 3 mean; the outer ring is trimmed off by map_overlap."""
    out = np.zeros_like(b)
    out[1:-1, 1:-1] = (b[:-2, :-2] + b[:-2, 1:-1] + b[:-2, 2:] + b[1:-1, :-2] + b[1:-1, 1:-1] + b[1:-1, 2:]
                       + b[2:, :-2] + b[2:, 1:-1] + b[2:, 2:]) / np.float32(9)
    return out


def measure(name, repeats, build):
    times, check = [], None
    for _ in range(repeats):
        t0 = time.perf_counter()
        out = build().compute()
        times.append(time.perf_counter() - t0)
        check = float(np.sum(out, dtype=np.float64))
    print(f"{name} dask best={min(times):.4f} median={statistics.median(times):.4f} check={check:.10e}", flush=True)


def main():
    scale, repeats, workers = (int(v) for v in sys.argv[1:4])
    matmul_repeats = int(sys.argv[4]) if len(sys.argv) > 4 else 1
    with dask.config.set(scheduler="threads", num_workers=workers):
        if matmul_repeats > 0:  # 0: skipped, for quick looks at the other rows
            a = persisted(8192 // scale, 1024 // scale, np.float64)
            b = persisted(8192 // scale, 1024 // scale, np.float64)
            measure("matmul", matmul_repeats, lambda: a @ b)
            del a, b
        x = persisted(16384 // scale, 2048 // scale, np.float32)
        measure("map_overlap", repeats, lambda: x.map_overlap(mean3x3, depth=1, boundary="reflect"))
        measure("cumsum", repeats, lambda: x.cumsum(axis=0))
        measure("where", repeats, lambda: da.where(x > np.float32(0.5), x, np.float32(0)))
        measure("argmax", repeats, lambda: x.argmax(axis=0))


if __name__ == "__main__":
    main()
