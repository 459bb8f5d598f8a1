"""dask.distributed's side of bench/mpi/graphs.sh, and the data both sides read.

  graphs_distributed.py shapes SIZE
      prints the shapes the bench uses for SIZE bytes (JSON): the FFT image,
      the standardize input, the matmul input, the graph file's leaves.
  graphs_distributed.py make DIR SIZE
      writes DIR/image.zarr (float32), DIR/x.zarr (float64), DIR/m.zarr
      (float64), zarr v2 with blosc lz4 + shuffle (the demo's codec), normal
      random numbers; both sides read these.
  graphs_distributed.py run WORKERS WORKLOAD PATH [COLUMNS LIMIT | OUT]
      the workload of bench_graphs_mpi (fft COLUMNS LIMIT, standardize OUT,
      matmul, graph) on a
      fresh LocalCluster(n_workers=WORKERS, threads_per_worker=1); prints one
      JSON line like bench_graphs_mpi's: seconds (graph built and computed, the
      cluster already up; standardize: z stored to OUT by to_zarr, and its
      value the sum of z^2 read back from OUT after the timed stretch), the CPU seconds of the workers and of this process
      over the same stretch, the value, the tasks, and the peak RSS of the
      workers (VmHWM of each worker process, read by client.run) plus this
      process's (the scheduler and the client run here: LocalCluster's
      scheduler is in-process), with each figure apart; the nannies are left
      out. "transfers" is the workers' gather_dep transfers (each brings one or
      more results from another worker; the scheduler's messages to and from
      the workers, two or more per task, are not in it).
"""
import json
import math
import sys
import time

import numpy as np

GIB = 1 << 30


def shapes(size):
    """The inputs for SIZE bytes (2 GiB: the issue's sizes)."""
    n = size // 4  # float32 image
    cols = 1 << max(4, round(math.log2(n) / 2 + 0.5))
    rows = max(64, n // cols)
    side = max(64, int(math.isqrt(size // 8)) // 64 * 64)  # float64 square for standardize
    m_block = max(16, int(1024 * math.sqrt(size / (2 * GIB))))  # matmul: 8 x 8 blocks (8192^2 in 1024^2 at 2 GiB)
    return {
        "image": [rows, cols], "image_chunks": [max(1, rows // 64), cols], "fft_columns": max(1, cols // 128),
        # the rechunk's largest intermediate block: 4 row blocks of the rfft (128 MiB, dask's default, at 2 GiB)
        "rechunk_limit": 4 * max(1, rows // 64) * (cols // 2 + 1) * 8,
        "x": [side, side], "x_chunks": [max(1, side // 32), side],
        "m": [8 * m_block, 8 * m_block], "m_chunks": [m_block, m_block],
        "leaves": max(1000, int(100000 * size / (2 * GIB))),
    }


def make(folder, size):
    import zarr
    from numcodecs import Blosc
    s = shapes(size)
    codec = Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE)
    rng = np.random.default_rng(0)
    for name, dtype in (("image", np.float32), ("x", np.float64), ("m", np.float64)):
        shape, chunks = s[name], s[name + "_chunks"]
        z = zarr.open(f"{folder}/{name}.zarr", mode="w", shape=shape, chunks=chunks, dtype=dtype, compressor=codec)
        step = chunks[0] * max(1, (64 << 20) // (chunks[0] * shape[1] * np.dtype(dtype).itemsize))
        for r in range(0, shape[0], step):
            h = min(step, shape[0] - r)
            block = rng.standard_normal((h, shape[1]), dtype=np.float32 if dtype == np.float32 else np.float64)
            if name == "x":  # columns of different means and spreads, so that standardizing changes them
                block = block * (1 + np.arange(shape[1]) % 7) + np.arange(shape[1]) % 5
            z[r:r + h] = block


def hwm_kib():
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    return 0


def cpu_seconds():
    import resource
    u = resource.getrusage(resource.RUSAGE_SELF)
    return u.ru_utime + u.ru_stime


def transfers(dask_worker):
    return dask_worker.state.transfer_incoming_count_total


def workload(client, what, path, extra):
    import dask.array as da
    if what == "graph":
        # graph_run_dask as a module (run() puts bench/peers on the workers'
        # PYTHONPATH): its task function pickles by reference, not by value.
        from graph_run_dask import dask_graph
        dsk, outputs = dask_graph(path)
        start = time.perf_counter()
        client.get(dsk, outputs)
        return time.perf_counter() - start, 0.0, len(dsk)
    start = time.perf_counter()
    x = da.from_zarr(path)
    if what == "fft":
        columns, limit = int(extra[0]), int(extra[1])
        rows = da.fft.rfft(x, axis=1).astype(np.complex64)
        f = da.fft.fft(rows.rechunk((-1, columns), block_size_limit=limit), axis=0)
        s = (abs(f) ** 2).sum()
    elif what == "standardize":
        from numcodecs import Blosc
        z = (x - x.mean(axis=0)) / x.std(axis=0)
        stored = da.to_zarr(z, extra[0], compute=False,
                            compressor=Blosc(cname="lz4", clevel=5, shuffle=Blosc.SHUFFLE))
        tasks = len(stored.__dask_graph__())
        client.compute(stored).result()
        seconds = time.perf_counter() - start
        back = da.from_zarr(extra[0])
        return seconds, float(client.compute((back * back).sum()).result()), tasks
    elif what == "matmul":
        s = (x @ x.T).sum()
    else:
        raise SystemExit(f"unknown workload {what!r}")
    tasks = len(s.__dask_graph__())
    value = float(client.compute(s).result())
    return time.perf_counter() - start, value, tasks


def run(workers, what, path, extra):
    import os
    here = os.path.dirname(os.path.abspath(__file__))
    sys.path.insert(0, here)
    os.environ["PYTHONPATH"] = os.pathsep.join(p for p in (here, os.environ.get("PYTHONPATH")) if p)
    from distributed import Client, LocalCluster
    with LocalCluster(n_workers=workers, threads_per_worker=1, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        cpu_before = sum(client.run(cpu_seconds).values()) + cpu_seconds()
        seconds, value, tasks = workload(client, what, path, extra)
        cpu = sum(client.run(cpu_seconds).values()) + cpu_seconds() - cpu_before
        worker_kib = sorted(client.run(hwm_kib).values())
        moved = sum(client.run(transfers).values())
    scheduler_kib = hwm_kib()
    print(json.dumps({
        "workload": what, "workers": workers, "seconds": seconds, "cpu_s": cpu, "tasks": tasks, "value": value,
        "rss_mib": (sum(worker_kib) + scheduler_kib) / 1024, "worker_rss_mib": [k / 1024 for k in worker_kib],
        "scheduler_client_rss_mib": scheduler_kib / 1024, "transfers": moved}), flush=True)


def main():
    cmd = sys.argv[1]
    if cmd == "shapes":
        print(json.dumps(shapes(int(sys.argv[2]))))
    elif cmd == "make":
        make(sys.argv[2], int(sys.argv[3]))
    elif cmd == "run":
        run(int(sys.argv[2]), sys.argv[3], sys.argv[4], sys.argv[5:])
    else:
        raise SystemExit(__doc__)


if __name__ == "__main__":
    sys.exit(main())
