"""CI's bench smoke run of bench/mpi/graphs.sh's tessera side: every workload of
bench_graphs_mpi at a few MiB under `mpirun -n 2`, its sum checked against
numpy's on the same zarr stores (standardize: its store, written across the
ranks, read back and compared with numpy's z element by element), and the graph
file's run checked to send results between the ranks. Fails (exit 1) on a wrong value, a failed run, or a
run past its timeout. No dask cluster: that side's start alone would take the
smoke's budget.

usage: graphs_smoke.py BENCH_GRAPHS_MPI MPIRUN
"""
import json
import os
import subprocess
import sys
import tempfile

import numpy as np

here = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(here, "..", "peers"))
sys.path.insert(0, os.path.join(here, "..", "graphs"))
import graphs_distributed  # noqa: E402  (the bench's shapes and inputs)

SIZE = 4 << 20
RANKS = 2


def run(binary, mpirun, folder, *args):
    cmd = [mpirun, "-n", str(RANKS), "--oversubscribe", binary, *map(str, args)]
    p = subprocess.run(cmd, cwd=folder, capture_output=True, text=True, timeout=60)
    if p.returncode != 0:
        raise SystemExit(f"{' '.join(cmd)} failed (exit {p.returncode}):\n{p.stderr[-2000:]}")
    return json.loads(next(line for line in p.stdout.splitlines() if line.startswith("{")))


def standardized(x):
    return (x - x.mean(axis=0)) / x.std(axis=0)


def expected(folder, what, columns):
    import zarr
    x = zarr.open(f"{folder}/{what}.zarr", "r")[:]
    if what == "image":
        rows = np.fft.rfft(x, axis=1).astype(np.complex64)
        return float((np.abs(np.fft.fft(rows, axis=0)) ** 2).sum())
    if what == "x":
        z = standardized(x)
        return float((z * z).sum())
    return float((x @ x.T).sum())


def stored_wrong(folder, out):
    """What is wrong with the standardize store `out` against numpy's z, or None."""
    import zarr
    want = standardized(zarr.open(f"{folder}/x.zarr", "r")[:])
    got = zarr.open(f"{folder}/{out}", "r")
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"standardize: store {out} is {got.dtype} {got.shape}, expected {want.dtype} {want.shape}"
    if not np.allclose(got[:], want, rtol=1e-12, atol=1e-12):
        return f"standardize: store {out} differs from numpy's z (largest difference {np.abs(got[:] - want).max()!r})"
    return None


def main():
    binary, mpirun = os.path.abspath(sys.argv[1]), sys.argv[2]
    s = graphs_distributed.shapes(SIZE)
    bad = []
    with tempfile.TemporaryDirectory(prefix="tessera-mpi-graphs-smoke-") as folder:
        graphs_distributed.make(folder, SIZE)
        for what, store, extra, tol in (("fft", "image", [s["fft_columns"], s["rechunk_limit"]], 1e-4),
                                        ("standardize", "x", ["z.zarr"], 1e-9), ("matmul", "m", [], 1e-9)):
            r = run(binary, mpirun, folder, what, f"{store}.zarr", *extra)
            want = expected(folder, store, s["fft_columns"])
            rel = abs(r["value"] - want) / abs(want)
            print(f"{what}: {r['value']:.10g} (numpy {want:.10g}), {r['seconds']:.2f} s, "
                  f"{r['messages_sent']} results sent between {RANKS} ranks")
            if rel > tol:
                bad.append(f"{what}: tessera {r['value']!r}, numpy {want!r}")
            if what == "standardize":
                wrong = stored_wrong(folder, "z.zarr")
                if wrong:
                    bad.append(wrong)
        import tree_graph
        sys.argv = ["tree_graph.py", "500", f"{folder}/tree.json"]
        tree_graph.main()
        with open(f"{folder}/tree.json") as f:
            tasks = len(json.load(f)["tasks"])
        r = run(binary, mpirun, folder, "graph", "tree.json")
        print(f"graph: {r['tasks']} tasks, {r['seconds'] / r['tasks'] * 1e6:.1f} µs per task, "
              f"{r['messages_sent']} results sent")
        if r["tasks"] != tasks or r["messages_sent"] == 0:
            bad.append(f"graph: expected {tasks} tasks and results sent between ranks, "
                       f"found {r['tasks']} tasks and {r['messages_sent']} sent")
    for b in bad:
        print("WRONG " + b, file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
