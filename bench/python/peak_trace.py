"""What a run holds at its peak RSS: the rechunk workload of arrays.py (rows to columns, to
zarr) on an existing store, with dask's threaded scheduler or tessera.get, recording each
task's start and end (dask's pretask/posttask callbacks) and the RSS every 2 ms.

At the sample of highest RSS it prints the results held then (a result is held from its
task's end until its last reader's end, with the bytes posttask saw), by key name, the
tasks running, and the tasks that were ready and not started when the first of those began.
Both schedulers release a result after its last reader, so the difference between two peaks
is either what is held or what the running tasks had allocated so far.

  /usr/bin/python3 bench/python/peak_trace.py STORE {dask|tessera} [--workers N] [--block 256]

STORE: a zarr v2 store as arrays.py writes it (n x n float64 in blocks of --block rows).
"""
import argparse
import bisect
import collections
import os
import shutil
import tempfile
import threading
import time


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("store")
    p.add_argument("side", choices=("dask", "tessera"))
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--block", type=int, default=256)
    args = p.parse_args()

    import dask.array as da
    from dask.callbacks import Callback
    from dask.core import get_dependencies

    page = os.sysconf("SC_PAGE_SIZE")
    samples, events, done = [], [], threading.Event()

    def sample():
        with open("/proc/self/statm") as f:
            while not done.is_set():
                f.seek(0)
                samples.append((time.perf_counter(), int(f.read().split()[1]) * page))
                time.sleep(0.002)

    class Record(Callback):
        def _pretask(self, key, dsk, state):
            events.append((time.perf_counter(), True, key, 0))

        def _posttask(self, key, result, dsk, state, worker):
            events.append((time.perf_counter(), False, key, int(getattr(result, "nbytes", 0) or 0)))

    out = tempfile.mkdtemp(prefix="tessera-peak-trace-")
    try:
        x = da.from_zarr(args.store)
        limit = 4 * x.shape[1] * args.block * x.dtype.itemsize
        d = x.rechunk((-1, args.block), block_size_limit=limit).to_zarr(
            os.path.join(out, "out.zarr"), compressor=None, compute=False)
        graph = dict(d.__dask_graph__())
        if args.side == "dask":
            scheduler = "threads"
        else:
            import tessera
            scheduler = tessera.get
        deps = {k: get_dependencies(graph, k) for k in graph}
        sampler = threading.Thread(target=sample)
        sampler.start()
        start = time.perf_counter()
        try:
            with Record():
                d.compute(scheduler=scheduler, num_workers=args.workers)
        finally:
            done.set()
            sampler.join()
    finally:
        shutil.rmtree(out, ignore_errors=True)

    readers = collections.Counter(dep for ds in deps.values() for dep in ds)
    peak_time, peak_rss = max(samples, key=lambda s: s[1])
    held, running = {}, set()
    for t, starts, key, nbytes in events[:bisect.bisect([e[0] for e in events], peak_time)]:
        if starts:
            running.add(key)
            continue
        running.discard(key)
        held[key] = nbytes
        for dep in deps[key]:
            readers[dep] -= 1
            if readers[dep] == 0:
                held.pop(dep, None)
    print(f"{args.side}, {args.workers} workers: {time.perf_counter() - start:.2f} s, peak RSS "
          f"{peak_rss / 2**20:.0f} MiB at {peak_time - start:.2f} s (first sample {samples[0][1] / 2**20:.0f} MiB)")
    by_name = collections.defaultdict(list)
    for key, nbytes in held.items():
        by_name[key[0] if isinstance(key, tuple) else key].append(nbytes)
    print(f"  held then: {sum(held.values()) / 2**20:.0f} MiB")
    for name, sizes in sorted(by_name.items(), key=lambda kv: -sum(kv[1])):
        print(f"    {len(sizes):4d} x {name:60} {sum(sizes) / 2**20:7.0f} MiB")
    starts = {key: t for t, s, key, _ in events if s}
    for key in sorted(running, key=str):
        print(f"  running: {key} since {1000 * (peak_time - starts[key]):.0f} ms")
    if not running:
        return
    # What else the scheduler could have started then: tasks whose inputs had all ended (a
    # graph value that is not a task, such as the zarr array, is there from the start).
    first = min(starts[key] for key in running)
    ends = {key: t for t, s, key, _ in events if not s}
    ready = [key for key in starts if starts[key] > first and
             all(ends.get(dep, 0.0 if dep not in starts else float("inf")) <= first for dep in deps[key])]
    print(f"  ready and not started when the first of them started: {len(ready)}")
    for key in sorted(ready, key=str)[:8]:
        print(f"    {key}")


if __name__ == "__main__":
    main()
