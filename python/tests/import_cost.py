"""Prints what `import tessera` costs above a bare `import dask`: the time and the
resident memory that `import tessera` adds in an interpreter that imported dask,
each the median of 7 fresh interpreters (run by scripts/python-package; a figure,
not a test: timings are not asserted)."""
import statistics
import subprocess
import sys

MEASURE = """
import os, time
def resident():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
t0 = time.perf_counter()
import dask
t1, r1 = time.perf_counter(), resident()
import tessera
t2, r2 = time.perf_counter(), resident()
print(t1 - t0, r1, t2 - t1, r2 - r1)
"""


def main() -> None:
    runs = []
    for _ in range(7):
        out = subprocess.run([sys.executable, "-c", MEASURE], check=True, capture_output=True, text=True).stdout
        runs.append([float(v) for v in out.split()])
    dask_s, dask_rss, tessera_s, tessera_rss = (statistics.median(r[i] for r in runs) for i in range(4))
    print(f"import dask: {dask_s * 1e3:.0f} ms, {dask_rss / 2**20:.1f} MiB resident; import tessera after it: "
          f"+{tessera_s * 1e3:.0f} ms, +{tessera_rss / 2**20:.1f} MiB (target: <= 50 ms, <= 10 MiB)")


if __name__ == "__main__":
    main()
