"""Prints what `import tessera` costs above a bare `import dask`: the time and the
resident memory, each the median of 7 fresh interpreters (run by scripts/python-package;
a figure, not a test: timings are not asserted)."""
import statistics
import subprocess
import sys

MEASURE = """
import time
t = time.perf_counter()
{imports}
took = time.perf_counter() - t
with open("/proc/self/statm") as f:
    pages = int(f.read().split()[1])
import os
print(took, pages * os.sysconf("SC_PAGE_SIZE"))
"""


def measure(imports: str) -> tuple[float, float]:
    """The median seconds and resident bytes of `imports` in a fresh interpreter."""
    runs = []
    for _ in range(7):
        out = subprocess.run([sys.executable, "-c", MEASURE.format(imports=imports)], check=True,
                             capture_output=True, text=True).stdout.split()
        runs.append((float(out[0]), float(out[1])))
    return statistics.median(r[0] for r in runs), statistics.median(r[1] for r in runs)


def main() -> None:
    dask_s, dask_rss = measure("import dask")
    both_s, both_rss = measure("import dask\nimport tessera")
    print(f"import dask: {dask_s * 1e3:.0f} ms, {dask_rss / 2**20:.1f} MiB resident; import tessera after it: "
          f"+{(both_s - dask_s) * 1e3:.0f} ms, +{(both_rss - dask_rss) / 2**20:.1f} MiB (target: <= 50 ms, <= 10 MiB)")


if __name__ == "__main__":
    main()
