"""ipyparallel side of `scripts/bench spmd`: the workloads of bench/spmd_bench.cpp.

Starts a local cluster of 8 engines, then one of 100 (controller and engines on
loopback, via ipp.Cluster), and measures with BroadcastView:
  - no-op apply latency on each;
  - the MD5 tutorial end to end: scatter the ranks, apply the SPMD function to
    every engine, flatten the digests (checked against a plain loop).
Prints one JSON object on stdout; progress goes to stderr. The cluster is stopped
on every exit path, SIGTERM included (run.sh bounds the whole run with timeout).

Run with /usr/bin/python3 (Debian's python3-ipyparallel).
"""
import argparse
import json
import signal
import statistics
import sys
import time

import ipyparallel as ipp


def noop():
    pass


def spmd_task(folder, rank, size):
    """Engine `rank` of `size` hashes its partition of the sorted files."""
    import hashlib
    import os

    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    chunk = -(-len(files) // size)
    begin = min(rank * chunk, len(files))
    end = min(begin + chunk, len(files))
    out = []
    for path in files[begin:end]:
        with open(path, "rb") as f:
            out.append(hashlib.md5(f.read()).hexdigest())
    return out


def md5_plain(folder):
    """The plain loop: the whole list on one 'engine'."""
    return spmd_task(folder, 0, 1)


def timed(fn, repeats):
    """Median seconds of `repeats` calls, after one warm-up call."""
    fn()
    samples = []
    for _ in range(repeats):
        t = time.perf_counter()
        fn()
        samples.append(time.perf_counter() - t)
    return statistics.median(samples)


def log(*args):
    print(*args, file=sys.stderr, flush=True)


def run_cluster(n, start_timeout, measure):
    """Starts n engines on loopback, runs measure(rc, ids), and stops the cluster
    whatever happens. Returns the seconds the start took."""
    cluster = ipp.Cluster(n=n, controller_ip="127.0.0.1", engine_timeout=start_timeout, log_level=40)
    try:
        t = time.perf_counter()
        rc = cluster.start_and_connect_sync()
        rc.wait_for_engines(n, timeout=start_timeout)
        started = time.perf_counter() - t
        log(f"ipyparallel: {len(rc.ids)} engines up in {started:.1f} s")
        try:
            measure(rc, sorted(rc.ids))
        finally:
            rc.close()
        return started
    finally:
        t = time.perf_counter()
        try:
            cluster.stop_cluster_sync()
        finally:
            log(f"ipyparallel: cluster of {n} stopped in {time.perf_counter() - t:.1f} s")


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--engines", type=int, default=100)
    p.add_argument("--small", type=int, default=8, help="0: no separate small cluster")
    p.add_argument("--folder", required=True)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--md5-repeats", type=int, default=5)
    p.add_argument("--start-timeout", type=int, default=300)
    args = p.parse_args()

    # timeout(1) sends SIGTERM: turn it into an exception so `finally` stops the engines.
    def on_term(signum, frame):
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, on_term)
    result = {}
    plain = md5_plain(args.folder)
    result["md5_plain_loop"] = timed(lambda: md5_plain(args.folder), args.md5_repeats)

    def measure_noop(rc, ids):
        # As on the tessera side: a cluster of exactly that many engines.
        view = rc.broadcast_view(targets=ids)
        result[f"noop_apply_{len(ids)}"] = timed(lambda: view.apply_sync(noop), args.repeats)
        log(f"no-op apply to {len(ids)}: {result[f'noop_apply_{len(ids)}'] * 1e3:.2f} ms")

    def measure_all(rc, ids):
        measure_noop(rc, ids)
        view = rc.broadcast_view(targets=ids)

        def md5_end_to_end():
            view.scatter("rank", ids, flatten=True, block=True)
            ar = view.apply(spmd_task, args.folder, ipp.Reference("rank"), len(ids))
            sums = [s for part in ar.get() for s in part]
            if sums != plain:
                raise RuntimeError("the engines' digests differ from the plain loop's")

        key = f"md5_end_to_end_{len(ids)}"
        result[key] = timed(md5_end_to_end, args.md5_repeats)
        log(f"md5 end to end on {len(ids)}: {result[key] * 1e3:.1f} ms")

    if args.small:
        result[f"cluster_start_s_{args.small}"] = run_cluster(args.small, args.start_timeout, measure_noop)
    result[f"cluster_start_s_{args.engines}"] = run_cluster(args.engines, args.start_timeout, measure_all)
    print(json.dumps(result))


if __name__ == "__main__":
    main()
