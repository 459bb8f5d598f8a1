"""dask.array workloads on a zarr store with dask's threaded scheduler, with tessera.get,
with tessera.get under a memory limit of a third of dask's peak, and with tessera.array.

The store is n x n float64 (uncompressed zarr v2; --size bytes, default 2 GiB, so n = 16384;
--size 64MiB for a quick run) in blocks of --block rows; 2 threads:
  standardize: ((x - x.mean(0)) / x.std(0)) stored to zarr
  sym-sum:     (x + x.T).sum()
  rechunk:     x.rechunk((-1, --block)) stored to zarr (rows to columns); dask plans its
               intermediate chunks under block_size_limit = 4 source blocks (at 2 GiB that is
               dask's default array.chunk-size, 128 MiB), so that at every --size each task of
               the graph fits in the memory limit below (a limit below one task's need is a
               MemoryLimitError, not a measure of the scheduler)
Rows: "dask" is dask.config scheduler="threads"; "tessera.get" is the same dask graph with
scheduler=tessera.get; "tessera.get limit" adds memory_limit = dask's peak RSS / 3;
"tessera.array" is the same expression in tessera.array (its own C++ graph). Each run is a
process of its own whose peak RSS peak.py reads; the time is the computation alone.
With --repeat N the sides of a workload run N times, interleaved (dask, tessera.get, ...,
dask, ...), and each row gives the median and, in brackets, the lowest and highest: a
single run's peak varies by tens of MiB with the order the two workers finish in.
"""
import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time

from peak import measured

WORKLOADS = ("standardize", "sym-sum", "rechunk")
SIDES = ("dask", "tessera.get", "tessera.get limit", "tessera.array")


def run_dask(workload, src, dst, block, scheduler, extra):
    import dask
    import dask.array as da

    x = da.from_zarr(src)
    kwargs = dict(scheduler=scheduler, num_workers=2, **extra)
    if workload == "standardize":
        ((x - x.mean(0)) / x.std(0)).to_zarr(dst, compressor=None, compute=False).compute(**kwargs)
        return None
    if workload == "sym-sum":
        return float((x + x.T).sum().compute(**kwargs))
    limit = 4 * x.shape[1] * block * x.dtype.itemsize
    x.rechunk((-1, block), block_size_limit=limit).to_zarr(dst, compressor=None, compute=False).compute(**kwargs)
    return None


def run_tessera_array(workload, src, dst, block):
    import tessera.array as ta

    x = ta.from_zarr(src)
    if workload == "standardize":
        ta.store((x - ta.mean(x, axis=0)) / ta.std(x, axis=0), dst, num_workers=2)
        return None
    if workload == "sym-sum":
        return float(ta.sum(x + x.T).compute(num_workers=2))
    ta.store(x.rechunk((-1, block)), dst, num_workers=2)
    return None


def child(side, workload, src, dst, block, memory_limit):
    start = time.perf_counter()
    if side == "dask":
        value = run_dask(workload, src, dst, block, "threads", {})
    elif side.startswith("tessera.get"):
        import tessera

        extra = {"memory_limit": memory_limit} if memory_limit > 0 else {}
        value = run_dask(workload, src, dst, block, tessera.get, extra)
    else:
        value = run_tessera_array(workload, src, dst, block)
    print(json.dumps({"seconds": time.perf_counter() - start, "value": value}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--size", default="2GiB", help="bytes of the store (n x n float64), e.g. 2GiB or 64MiB")
    p.add_argument("--block", type=int, default=256, help="rows per source block, columns per rechunked block")
    p.add_argument("--workloads", default=",".join(WORKLOADS))
    p.add_argument("--dir", default=None, help="folder for the stores (default: a temporary one)")
    p.add_argument("--repeat", type=int, default=1, help="runs of each side, interleaved; rows give the median")
    p.add_argument("--child", nargs=6, help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        side, workload, src, dst, block, limit = args.child
        return child(side, workload, src, dst, int(block), int(limit))

    import numpy as np
    import zarr
    from dask.utils import parse_bytes

    args.n = int((parse_bytes(args.size) / 8) ** 0.5)

    folder = tempfile.mkdtemp(prefix="tessera-bench-arrays-", dir=args.dir)
    try:
        src = os.path.join(folder, "x.zarr")
        z = zarr.open(src, mode="w", shape=(args.n, args.n), chunks=(args.block, args.n), dtype="f8", compressor=None)
        rng = np.random.default_rng(0)
        for r in range(0, args.n, args.block):
            z[r:r + args.block] = rng.standard_normal((min(args.block, args.n - r), args.n))
        print(f"source: {args.n} x {args.n} float64 ({args.n * args.n * 8 / 2**20:.0f} MiB, zarr), blocks of "
              f"{args.block} rows; 2 threads")
        print(f"{'workload':12} {'side':24} {'seconds':>8} {'peak RSS MiB':>13}")
        for workload in args.workloads.split(","):
            runs = {side: [] for side in SIDES}
            limit = {side: 0 for side in SIDES}
            for _ in range(args.repeat):
                for side in SIDES:
                    if side == "tessera.get limit" and not limit[side]:
                        if not runs["dask"]:
                            continue
                        limit[side] = int(runs["dask"][0]["peak_rss_mib"] * 2**20 / 3)
                    dst = os.path.join(folder, "out.zarr")
                    shutil.rmtree(dst, ignore_errors=True)
                    try:
                        runs[side].append(
                            measured([__file__, "--child", side, workload, src, dst, str(args.block), str(limit[side])]))
                    except Exception as e:  # a run that fails is a row, not the end of the table
                        print(f"{workload:12} {side:24} failed: {str(e)[:160]}")
            for side in SIDES:
                if runs[side]:
                    label = side + (f" ({limit[side] / 2**20:.0f} MiB)" if limit[side] else "")
                    print(f"{workload:12} {label:24} {_summary([r['seconds'] for r in runs[side]], 8, 2)} "
                          f"{_summary([r['peak_rss_mib'] for r in runs[side]], 13, 0)}", flush=True)
            if workload == "sym-sum" and runs["dask"]:
                ref = runs["dask"][0]["value"]
                for side, rs in runs.items():
                    for r in rs:
                        assert abs(r["value"] - ref) <= 1e-6 * max(1.0, abs(ref)), (side, r["value"], ref)
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _summary(values, width, digits):
    """The median of `values` in `width` columns, then [lowest-highest] when there are several."""
    text = f"{statistics.median(values):{width}.{digits}f}"
    if len(values) > 1:
        text += f" [{min(values):.{digits}f}-{max(values):.{digits}f}]"
    return text


if __name__ == "__main__":
    sys.exit(main())
