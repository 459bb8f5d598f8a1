"""tessera.rechunk vs dask.array's rechunk stored to zarr, on one zarr store.

The source is a zarr v2 store of float64 (--rows x --cols, uncompressed) in
blocks of whole rows; both sides rechunk it to blocks of whole columns
(--target-cols wide) into a new uncompressed zarr v2 store, with 2 threads:

    tessera:  tessera.rechunk(src, dst, (-1, C), max_mem=M, num_workers=2)
    dask:     da.from_zarr(src).rechunk((-1, C)).to_zarr(dst, compressor=None)
              under dask.config scheduler="threads", num_workers=2

Each run is a process of its own whose peak RSS peak.py reads (imports
included); the time is the call alone, measured in that process. Best
time of --repeat runs, largest peak; the outputs are compared with the source.
"""
import argparse
import json
import os
import shutil
import tempfile
import time

from peak import measured


def child(side, src, dst, cols, max_mem):
    """One rechunk in this process; prints its time as JSON."""
    if side == "tessera":
        import tessera

        start = time.perf_counter()
        tessera.rechunk(src, dst, (-1, cols), max_mem=max_mem, num_workers=2, progress=False)
    else:
        import dask
        import dask.array as da

        start = time.perf_counter()
        with dask.config.set(scheduler="threads", num_workers=2):
            da.from_zarr(src).rechunk((-1, cols)).to_zarr(dst, compressor=None)
    print(json.dumps({"seconds": time.perf_counter() - start}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--rows", type=int, default=8192)
    p.add_argument("--cols", type=int, default=8192)
    p.add_argument("--src-rows", type=int, default=256, help="rows per source block")
    p.add_argument("--target-cols", type=int, default=256, help="columns per target block")
    p.add_argument("--max-mem", default="256MiB", help="tessera's max_mem")
    p.add_argument("--repeat", type=int, default=2)
    p.add_argument("--dir", default=None, help="folder for the stores (default: a temporary one)")
    p.add_argument("--child", nargs=5, metavar=("SIDE", "SRC", "DST", "COLS", "MAXMEM"), help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        side, src, dst, cols, max_mem = args.child
        return child(side, src, dst, int(cols), max_mem)

    import numpy as np
    import zarr

    folder = tempfile.mkdtemp(prefix="tessera-bench-rechunk-", dir=args.dir)
    try:
        src = os.path.join(folder, "rows.zarr")
        z = zarr.open(src, mode="w", shape=(args.rows, args.cols), chunks=(args.src_rows, args.cols),
                      dtype="f8", compressor=None)
        for r in range(0, args.rows, args.src_rows):
            n = min(args.src_rows, args.rows - r)
            z[r:r + n] = np.arange(r * args.cols, (r + n) * args.cols, dtype="f8").reshape(n, args.cols)
        mib = args.rows * args.cols * 8 / 2**20
        print(f"source: {src} {args.rows} x {args.cols} float64 ({mib:.0f} MiB), blocks ({args.src_rows}, {args.cols})"
              f" -> blocks ({args.rows}, {args.target_cols}); 2 threads; tessera max_mem={args.max_mem}")
        rows = {}
        for _ in range(args.repeat):
            for side in ("tessera", "dask"):
                dst = os.path.join(folder, side + ".zarr")
                shutil.rmtree(dst, ignore_errors=True)
                r = measured([__file__, "--child", side, src, dst, str(args.target_cols), args.max_mem])
                best = rows.setdefault(side, {"seconds": float("inf"), "peak_rss_mib": 0.0})
                best["seconds"] = min(best["seconds"], r["seconds"])
                best["peak_rss_mib"] = max(best["peak_rss_mib"], r["peak_rss_mib"])
                out_z = zarr.open(dst, mode="r")
                assert out_z.chunks == (args.rows, args.target_cols), out_z.chunks
                for c in (0, args.cols // 2, args.cols - 1):  # spot checks of whole columns
                    expect = np.arange(args.rows, dtype="f8") * args.cols + c
                    assert np.array_equal(out_z[:, c], expect), (side, c)
        print(f"{'':10} {'seconds':>9} {'peak RSS MiB':>13}")
        for side in ("tessera", "dask"):
            print(f"{side:10} {rows[side]['seconds']:9.2f} {rows[side]['peak_rss_mib']:13.0f}")
        print(f"tessera is {rows['dask']['seconds'] / rows['tessera']['seconds']:.1f}x faster, "
              f"at {rows['tessera']['peak_rss_mib'] / rows['dask']['peak_rss_mib']:.2f}x dask's peak RSS")
    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    main()
