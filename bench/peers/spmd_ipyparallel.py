"""ipyparallel side of `scripts/bench spmd`: the workloads of bench/spmd_bench.cpp.

Starts one local cluster (controller and engines on loopback, via ipp.Cluster),
then measures with BroadcastView:
  - no-op apply latency to the first 8 engines and to all of them;
  - the MD5 tutorial end to end: scatter the ranks, apply the SPMD function to
    every engine, flatten the digests (checked against a plain loop).
Prints one JSON object on stdout; progress goes to stderr. The cluster is stopped
on every exit path, SIGTERM included (run.sh bounds the whole run with timeout).

Run with /usr/bin/python3 (Debian's python3-ipyparallel).
"""
import argparse
import hashlib
import json
import os
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
    files = sorted(os.path.join(folder, f) for f in os.listdir(folder))
    out = []
    for path in files:
        with open(path, "rb") as f:
            out.append(hashlib.md5(f.read()).hexdigest())
    return out


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


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--engines", type=int, default=100)
    p.add_argument("--small", type=int, default=8)
    p.add_argument("--folder", required=True)
    p.add_argument("--repeats", type=int, default=30)
    p.add_argument("--md5-repeats", type=int, default=5)
    p.add_argument("--start-timeout", type=int, default=300)
    args = p.parse_args()

    # timeout(1) sends SIGTERM: turn it into an exception so `finally` stops the engines.
    def on_term(signum, frame):
        raise SystemExit(f"stopped by signal {signum}")

    signal.signal(signal.SIGTERM, on_term)

    cluster = ipp.Cluster(n=args.engines, controller_ip="127.0.0.1", engine_timeout=args.start_timeout,
                          log_level=40)
    result = {"engines": args.engines}
    try:
        t = time.perf_counter()
        rc = cluster.start_and_connect_sync()
        rc.wait_for_engines(args.engines, timeout=args.start_timeout)
        result["cluster_start_s"] = time.perf_counter() - t
        log(f"ipyparallel: {len(rc.ids)} engines up in {result['cluster_start_s']:.1f} s")
        ids = sorted(rc.ids)
        small = rc.broadcast_view(targets=ids[: args.small])
        full = rc.broadcast_view(targets=ids)

        result[f"noop_apply_{args.small}"] = timed(lambda: small.apply_sync(noop), args.repeats)
        log(f"no-op apply to {args.small}: {result[f'noop_apply_{args.small}'] * 1e3:.2f} ms")
        result[f"noop_apply_{args.engines}"] = timed(lambda: full.apply_sync(noop), args.repeats)
        log(f"no-op apply to {args.engines}: {result[f'noop_apply_{args.engines}'] * 1e3:.2f} ms")

        plain = md5_plain(args.folder)

        def md5_end_to_end():
            full.scatter("rank", ids, flatten=True, block=True)
            ar = full.apply(spmd_task, args.folder, ipp.Reference("rank"), len(ids))
            sums = [s for part in ar.get() for s in part]
            if sums != plain:
                raise RuntimeError("the engines' digests differ from the plain loop's")

        result[f"md5_end_to_end_{args.engines}"] = timed(md5_end_to_end, args.md5_repeats)
        log(f"md5 end to end on {args.engines}: {result[f'md5_end_to_end_{args.engines}'] * 1e3:.1f} ms")
        result["md5_plain_loop"] = timed(lambda: md5_plain(args.folder), args.md5_repeats)
        rc.close()
    finally:
        t = time.perf_counter()
        try:
            cluster.stop_cluster_sync()
        finally:
            log(f"ipyparallel: cluster stopped in {time.perf_counter() - t:.1f} s")
    print(json.dumps(result))


if __name__ == "__main__":
    main()
