"""Prints the side-by-side table of `scripts/bench mpi`.

usage: table.py ENGINES TESSERA_JSON PEER_JSON EXAMPLE_SECONDS

The JSON figures are medians (bench/mpi/spmd_mpi.cpp, bench/peers/spmd_ipyparallel.py).
The last row starts a cluster and runs the tutorial once: for tessera one run of
`mpirun -n ENGINES+1 spmd_md5_mpi`, start to exit (it also writes the files and runs
the plain loop); for ipyparallel its cluster's start plus the tutorial's median.
"""
import json
import sys


def load(path):
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
    if seconds < 1:
        return f"{seconds * 1e3:.2f} ms"
    return f"{seconds:.2f} s"


def main():
    n = int(sys.argv[1])
    t = load(sys.argv[2])
    p = load(sys.argv[3])
    rows = [
        (f"no-op apply, {n} engines", t.get(f"noop_apply_{n}"), p.get(f"noop_apply_{n}")),
        (f"MD5 tutorial (500 x 1 KiB), {n} engines", t.get(f"md5_end_to_end_{n}"), p.get(f"md5_end_to_end_{n}")),
        ("MD5 plain loop (no engines)", t.get("md5_plain_loop"), p.get("md5_plain_loop")),
        ("cluster start + MD5 tutorial", float(sys.argv[4]),
         p[f"cluster_start_s_{n}"] + p[f"md5_end_to_end_{n}"] if f"cluster_start_s_{n}" in p else None),
    ]
    print(f"{'':44} {'tessera (MPI)':>14} {'ipyparallel':>14} {'ratio':>8}")
    for name, a, b in rows:
        ratio = f"{b / a:.1f}x" if a and b else "-"
        print(f"{name:44} {fmt(a):>14} {fmt(b):>14} {ratio:>8}")


if __name__ == "__main__":
    main()
