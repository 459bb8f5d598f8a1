"""What a run holds at its peak RSS: a workload of arrays.py (rechunk: rows to columns, to
zarr; standardize: (x - x.mean(0)) / x.std(0) to zarr) on an existing store, with dask's
threaded scheduler or tessera.get, recording each task's start and end (dask's
pretask/posttask callbacks) and the RSS every 2 ms.

At the sample of highest RSS it prints the results held then (a result is held from its
task's end until its last reader's end, with the bytes posttask saw), by key name, and the
memory they keep alive (each distinct numpy base once: a rechunk's cuts are views of the
block they cut), the tasks running, and the tasks that were ready and not started when the
first of those began. Both schedulers release a result after its last reader, so the
difference between two peaks is either what is held or what the running tasks had
allocated so far.

  /usr/bin/python3 bench/python/peak_trace.py STORE {dask|tessera} [--workers N] [--block 256]
      [--workload rechunk|standardize] [--order dask|tessera] [--traced] [--timeline]

STORE: a zarr v2 store as arrays.py writes it (n x n float64 in blocks of --block rows).
--order tessera: dask's threaded scheduler with tessera.order's priorities in place of
dask.order's (dask.local.order replaced), to tell the order from the scheduler.
--traced: also the peak of the bytes Python and numpy had allocated (tracemalloc), which
counts an array from its allocation, where RSS counts its pages as they are first written.
--timeline: also each task's start and end from 2 s before the peak to 0.5 s after it.
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
    p.add_argument("--workload", choices=("rechunk", "standardize"), default="rechunk")
    p.add_argument("--order", choices=("dask", "tessera"), default="dask",
                   help="the priorities dask's threaded scheduler uses (side dask only)")
    p.add_argument("--traced", action="store_true", help="also print tracemalloc's peak")
    p.add_argument("--timeline", action="store_true", help="also print the tasks' starts and ends near the peak")
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
            base = result
            while getattr(base, "base", None) is not None and hasattr(base.base, "nbytes"):
                base = base.base
            events.append((time.perf_counter(), False, key,
                           (int(getattr(result, "nbytes", 0) or 0), id(base), int(getattr(base, "nbytes", 0) or 0))))

    out = tempfile.mkdtemp(prefix="tessera-peak-trace-")
    try:
        x = da.from_zarr(args.store)
        if args.workload == "rechunk":
            limit = 4 * x.shape[1] * args.block * x.dtype.itemsize
            y = x.rechunk((-1, args.block), block_size_limit=limit)
        else:
            y = (x - x.mean(0)) / x.std(0)
        d = y.to_zarr(os.path.join(out, "out.zarr"), compressor=None, compute=False)
        graph = dict(d.__dask_graph__())
        if args.side == "dask":
            scheduler = "threads"
            if args.order == "tessera":
                import dask.local
                import tessera
                dask.local.order = tessera.order
        else:
            import tessera
            scheduler = tessera.get
        deps = {k: get_dependencies(graph, k) for k in graph}
        sampler = threading.Thread(target=sample)
        sampler.start()
        if args.traced:
            import tracemalloc
            tracemalloc.start()
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
    held, running = {}, set()  # held: key -> (nbytes, id of its base, the base's nbytes)
    for t, starts, key, sizes in events[:bisect.bisect([e[0] for e in events], peak_time)]:
        if starts:
            running.add(key)
            continue
        running.discard(key)
        held[key] = sizes
        for dep in deps[key]:
            readers[dep] -= 1
            if readers[dep] == 0:
                held.pop(dep, None)
    print(f"{args.side}, {args.workers} workers: {time.perf_counter() - start:.2f} s, peak RSS "
          f"{peak_rss / 2**20:.0f} MiB at {peak_time - start:.2f} s (first sample {samples[0][1] / 2**20:.0f} MiB)")
    if args.traced:
        print(f"  allocated by Python and numpy at most (tracemalloc): {tracemalloc.get_traced_memory()[1] / 2**20:.0f} MiB")
    by_name = collections.defaultdict(list)
    for key, (nbytes, _, _) in held.items():
        by_name[key[0] if isinstance(key, tuple) else key].append(nbytes)
    bases = {base: base_bytes for _, base, base_bytes in held.values()}
    print(f"  held then: {sum(s[0] for s in held.values()) / 2**20:.0f} MiB, keeping "
          f"{sum(bases.values()) / 2**20:.0f} MiB of arrays alive")
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
    if args.timeline:
        print("  ms from the peak, tasks starting and ending:")
        for t, starts_, key, _ in events:
            if peak_time - 2.0 <= t <= peak_time + 0.5:
                print(f"    {1000 * (t - peak_time):9.1f} {'start' if starts_ else 'end  '} {key}")


if __name__ == "__main__":
    main()
