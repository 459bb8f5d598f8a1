"""Prints the table of bench/mpi/graphs.sh (graphs across MPI ranks beside dask.distributed).

usage: graphs_table.py RESULTS.jsonl SHAPES.json SIZE RANKS

RESULTS holds one JSON line per run: bench_graphs_mpi's (who = tessera, or
tessera-scale for its runs alone on the scaling graph) and
bench/peers/graphs_distributed.py's (who = dask). One markdown table: every
figure of each workload side by side and the ratios (time and CPU: dask /
tessera, so above 1 is tessera faster; memory: tessera / dask), then the
issue's targets for the FFT and whether this run met them. Exit status 1 when
a value differs from dask's (the workloads compute the same sums).
"""
import json
import os
import sys

# Relative difference allowed between the two sides' sums: the FFT's rows pass
# through complex64 on both sides but its sums are of different precision.
TOLERANCE = {"fft": 1e-4, "standardize": 1e-9, "matmul": 1e-9}


def fmt(v, digits=2):
    if v is None:
        return "-"
    if abs(v) >= 100:
        return f"{v:,.0f}"
    return f"{v:.{digits}f}"


def ratio(a, b):
    return f"{a / b:.2f}x" if a and b else "-"


def main():
    path, shapes_path, size, ranks = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
    runs = [json.loads(line) for line in open(path) if line.strip()]
    shapes = json.load(open(shapes_path))
    t = [r for r in runs if r["who"] in ("tessera", "tessera-scale")]  # -scale: alone, never beside dask
    d = {r["workload"]: r for r in runs if r["who"] == "dask"}
    names = {
        "fft": "2-D FFT, float32 %d x %d (rfft rows, rechunk, fft columns, sum of abs(F)^2)" % tuple(shapes["image"]),
        "standardize": "(x - x.mean(0)) / x.std(0), float64 %d x %d, stored to zarr (same: sum of squares read back)"
                       % tuple(shapes["x"]),
        "matmul": "x @ x.T, float64 %d x %d in blocks of %d x %d, sum" % (*shapes["m"], *shapes["m_chunks"]),
        "graph": "tree-sum graph file of tiny tasks",
    }
    scaling = "scheduling cost across ranks: tree-sum graph file, tessera alone"
    print()
    print(f"Graphs across MPI ranks, {size}: tessera on {ranks} MPI ranks x 1 worker beside dask.distributed "
          f"LocalCluster(n_workers={ranks}, threads_per_worker=1)")
    print()
    print("| workload | tessera ranks | tasks (tessera / dask) | wall s tessera | wall s dask | dask / tessera "
          "| CPU s tessera | CPU s dask | dask / tessera CPU | sum peak RSS MiB tessera | dask (workers + scheduler) "
          "| tessera / dask RSS | results sent between ranks (MiB) | dask worker transfers | µs per task tessera "
          "| µs per task dask | messages per task tessera | transfers per task dask | same value |")
    print("|---" * 19 + "|")
    bad = []
    for a in t:
        w, n = a["workload"], a["ranks"]
        b = d.get(w) if n == ranks and a["who"] == "tessera" else None
        same = "-"
        if b is not None and w in TOLERANCE:
            rel = abs(a["value"] - b["value"]) / max(abs(b["value"]), 1e-300)
            same = "yes" if rel <= TOLERANCE[w] else f"NO ({a['value']:.6g} vs {b['value']:.6g})"
            if rel > TOLERANCE[w]:
                bad.append(w)
        us_a = a["seconds"] / a["tasks"] * 1e6 if w == "graph" else None
        us_b = b["seconds"] / b["tasks"] * 1e6 if b and w == "graph" else None
        cells = [
            scaling if a["who"] == "tessera-scale" else names[w], str(n), f"{a['tasks']:,} / {b['tasks']:,}" if b else f"{a['tasks']:,}",
            fmt(a["seconds"]), fmt(b["seconds"]) if b else "-", ratio(b["seconds"], a["seconds"]) if b else "-",
            fmt(a["cpu_s"]), fmt(b["cpu_s"]) if b else "-", ratio(b["cpu_s"], a["cpu_s"]) if b else "-",
            fmt(a["rss_mib"], 0), fmt(b["rss_mib"], 0) if b else "-", ratio(a["rss_mib"], b["rss_mib"]) if b else "-",
            f"{a['messages_sent']:,} ({a['bytes_sent'] / 2**20:,.1f})", f"{b['transfers']:,}" if b else "-",
            fmt(us_a, 1), fmt(us_b, 1), f"{a['messages_sent'] / a['tasks']:.2f}",
            f"{b['transfers'] / b['tasks']:.2f}" if b else "-", same,
        ]
        print("| " + " | ".join(cells) + " |")
    f, g = next((r for r in t if r["workload"] == "fft"), None), d.get("fft")
    print()
    if f and g:
        speed, mem = g["seconds"] / f["seconds"], f["rss_mib"] / g["rss_mib"]
        print(f"FFT targets: time >= 3x faster than dask: {speed:.2f}x ({'met' if speed >= 3 else 'missed'}); "
              f"sum of peak RSS <= 0.5x dask's: {mem:.2f}x ({'met' if mem <= 0.5 else 'missed'}).")
    load = os.getloadavg()
    cores = os.cpu_count()
    note = f"{ranks} ranks (and {ranks} dask workers) on {cores} cores: oversubscribed, " if ranks > cores else ""
    print(f"{note}load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f} (1 / 5 / 15 min) at the end. "
          "Wall times are from a barrier before the graph is built to the value on rank 0 (dask: graph built and "
          "computed on a running cluster); CPU is all ranks' (dask: the workers' and the scheduler's process's) "
          "over the same stretch. dask's RSS: each worker's VmHWM plus the scheduler's process (LocalCluster runs "
          "it with the client), nannies left out. Messages: results sent once per (result, rank) by tessera; "
          "dask's gather_dep transfers between workers (its scheduler's own messages, two or more per task, "
          "are not counted).")
    if bad:
        print(f"values differ from dask's: {', '.join(bad)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
