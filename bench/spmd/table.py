"""Prints the side-by-side table of `scripts/bench spmd` from the two JSON outputs.

usage: table.py ENGINES PEER_JSON TESSERA_BENCHMARK_JSON...

Each figure is a median: for tessera over every repetition of every benchmark run
given, for ipyparallel over the calls its script timed.
"""
import collections
import json
import os
import statistics
import sys

UNIT = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1.0}


def tessera_medians(paths, seconds):
    """Per benchmark, the median over every repetition of every run of `seconds(b)`
    (b: one benchmark entry of the JSON; None skips it)."""
    samples = collections.defaultdict(list)
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        for b in data.get("benchmarks", []):
            if b.get("run_type") != "iteration" or b.get("error_occurred"):
                continue
            value = seconds(b)
            if value is not None:
                samples[b["run_name"]].append(value)
    return {name: statistics.median(v) for name, v in samples.items()}


def mean_call(b):
    """A repetition's mean time per call."""
    return b["real_time"] * UNIT[b["time_unit"]]


def median_call(b):
    """A repetition's median single call (the benchmarks that time each call)."""
    return b["median_us"] * 1e-6 if "median_us" in b else None


def peer_seconds(path):
    try:
        with open(path) as f:
            text = f.read().strip()
        return json.loads(text) if text else {}
    except (OSError, ValueError):
        return {}


def fmt(seconds):
    if seconds is None:
        return "-"
    if seconds < 1e-3:
        return f"{seconds * 1e6:.1f} us"
    return f"{seconds * 1e3:.2f} ms"


def main():
    n = int(sys.argv[1])
    p = peer_seconds(sys.argv[2])
    t = tessera_medians(sys.argv[3:], mean_call)
    m = tessera_medians(sys.argv[3:], median_call)
    rows = [
        ("no-op apply, 8 engines", t.get("BM_noop_apply/8/real_time"), p.get("noop_apply_8")),
        (f"no-op apply, {n} engines", t.get(f"BM_noop_apply/{n}/real_time"), p.get(f"noop_apply_{n}")),
        (f"no-op apply, {n} engines, median of single calls", m.get(f"BM_noop_apply_each/{n}/real_time"), None),
        ("plain thread wake-up round trip (scale)", m.get("BM_wake_round_trip/real_time"), None),
        (f"MD5 tutorial end to end, {n} engines", t.get(f"BM_md5_end_to_end/{n}/real_time"),
         p.get(f"md5_end_to_end_{n}")),
        ("MD5 plain loop (no engines)", t.get("BM_md5_plain_loop/real_time"), p.get("md5_plain_loop")),
    ]
    print()
    print("| workload | tessera | ipyparallel | ipyparallel / tessera |")
    print("| --- | ---: | ---: | ---: |")
    for name, a, b in rows:
        ratio = f"{b / a:,.0f}x" if a and b and b / a >= 10 else (f"{b / a:.2f}x" if a and b else "-")
        print(f"| {name} | {fmt(a)} | {fmt(b)} | {ratio} |")
    starts = [f"{k.rsplit('_', 1)[1]} engines {v:.1f} s" for k, v in p.items() if k.startswith("cluster_start_s_")]
    if starts:
        print(f"\nipyparallel cluster start (not in the times above): {', '.join(starts)}")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
