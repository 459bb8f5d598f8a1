"""Prints the side-by-side table of `scripts/bench mpi`.

usage: table.py ENGINES TESSERA_JSON PEER_JSON EXAMPLE_SECONDS

The JSON figures are medians (bench/mpi/spmd_mpi.cpp, bench/peers/spmd_ipyparallel.py).
The last row starts a cluster and runs the tutorial once: for tessera one run of
`mpirun -n ENGINES+1 spmd_md5_mpi`, start to exit (it also writes the files and runs
the plain loop); for ipyparallel its cluster's start plus the tutorial's median.
"""
import importlib.util
import os
import sys

# The local bench's table: its JSON reader and its units.
_spec = importlib.util.spec_from_file_location(
    "spmd_table", os.path.join(os.path.dirname(__file__), "..", "spmd", "table.py"))
spmd_table = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(spmd_table)


def main():
    n = int(sys.argv[1])
    t = spmd_table.peer_seconds(sys.argv[2])
    p = spmd_table.peer_seconds(sys.argv[3])
    start = p.get(f"cluster_start_s_{n}")
    rows = [
        (f"no-op apply, {n} engines", t.get(f"noop_apply_{n}"), p.get(f"noop_apply_{n}")),
        (f"MD5 tutorial (500 x 1 KiB), {n} engines", t.get(f"md5_end_to_end_{n}"), p.get(f"md5_end_to_end_{n}")),
        ("MD5 plain loop (no engines)", t.get("md5_plain_loop"), p.get("md5_plain_loop")),
        ("cluster start + MD5 tutorial once", float(sys.argv[4]),
         start + p[f"md5_end_to_end_{n}"] if start is not None else None),
    ]
    print()
    print(f"| workload | tessera on {n} MPI ranks | ipyparallel, {n} engines | ipyparallel / tessera |")
    print("| --- | ---: | ---: | ---: |")
    for name, a, b in rows:
        ratio = f"{b / a:.1f}x" if a and b else "-"
        print(f"| {name} | {spmd_table.fmt(a)} | {spmd_table.fmt(b)} | {ratio} |")
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")


if __name__ == "__main__":
    main()
