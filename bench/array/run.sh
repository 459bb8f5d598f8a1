#!/usr/bin/env bash
# The sum of a 2 GiB float64 .npy on disk, mapped: tessera at 1 and 2 workers
# vs numpy's np.load(mmap_mode='r').sum() vs dask.array.from_zarr(...).sum() on
# the same data stored as (uncompressed) zarr. Prints one table with ratios.
#
# Usage: scripts/bench array [BUILD_DIR=build] [GIB=2] [REPEATS=5]
#        (the same as bench/array/run.sh ...)
# The data goes to $TMPDIR (default /tmp) and is removed at the end, also on error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
gib=${2:-2}
repeats=${3:-5}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" -j2 bench/bench_array_sum >/dev/null

data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-array-XXXXXX")
trap 'rm -rf "$data"' EXIT
npy="$data/x.npy"
zarr="$data/x.zarr"
echo "writing ${gib} GiB of float64 as .npy and as zarr in $data ..." >&2
"$python" "$here/../peers/array_sum.py" make "$npy" "$zarr" "$gib"
# Read both once, so every contestant finds them in the page cache.
cat "$npy" >/dev/null
cat "$zarr"/* >/dev/null

out=$data/results.txt
{
  "$build/bench/bench_array_sum" "$npy" 1 "$repeats"
  "$build/bench/bench_array_sum" "$npy" 2 "$repeats"
  "$python" "$here/../peers/array_sum.py" numpy "$npy" "$repeats"
  "$python" "$here/../peers/array_sum.py" dask "$zarr" "$repeats" 1
  "$python" "$here/../peers/array_sum.py" dask "$zarr" "$repeats" 2
} | tee "$out" >&2

"$python" - "$out" "$gib" <<'PY'
import sys
rows = []
for line in open(sys.argv[1]):
    name, *fields = line.split()
    f = dict(x.split("=", 1) for x in fields)
    rows.append((name, int(f["workers"]), float(f["best"]), float(f["median"]), float(f["cpu"]), float(f["sum"])))
numpy_best = next(r[2] for r in rows if r[0] == "numpy")
dask2_best = next(r[2] for r in rows if r[0] == "dask" and r[1] == 2)
sums = {round(r[5] / rows[0][5], 9) for r in rows}
gib = float(sys.argv[2])
print(f"\nsum of a {gib:g} GiB float64 array (wall: best of runs; cpu: user + system of the cheapest run)")
print(f"{'who':<32}{'best s':>8}{'median s':>10}{'cpu s':>8}{'GiB/s':>7}{'vs numpy':>10}{'vs dask@2':>11}")
for name, w, best, med, cpu, s in rows:
    who = {"tessera": "tessera from_npy+sum", "numpy": "numpy load(mmap).sum", "dask": "dask from_zarr.sum"}[name]
    who += f" ({w} worker{'s' if w > 1 else ''})"
    print(f"{who:<32}{best:8.3f}{med:10.3f}{cpu:8.3f}{gib / best:7.2f}"
          f"{best / numpy_best:9.2f}x{best / dask2_best:10.2f}x")
print("(ratios are best wall time / the peer's: below 1 is faster)")
print("all sums agree" if len(sums) == 1 else f"SUMS DIFFER: {sorted(sums)}")
PY
