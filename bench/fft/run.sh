#!/usr/bin/env bash
# The FFT side by side, in one run:
#  1. kernels: tessera's two block FFTs on the same data, the lane kernel (lines
#     in SIMD lanes, for lengths of small prime factors) and Eigen's FFT module
#     (kissfft), beside numpy.fft (pocketfft) on the same sizes, one thread each,
#     best of 3, with the kernel fft_block uses for each case;
#  2. the workflow of scripts/demo's steps 2 and 3 (rfft along rows written into
#     a column-chunked scratch zarr, fft along columns, radial power spectrum) on
#     one generated image of SIZE (a zarr of the demo's default codec, blosc lz4
#     with shuffle, read by both): `demo --input` under --max-mem 512MiB at 2
#     workers against dask (da.fft.rfft, cast to complex64, the same rechunk,
#     to_zarr, da.fft.fft, the same radial sums) at 2 threads: time and peak RSS.
#
# Usage: scripts/bench fft [SIZE=1GiB] [BUILD_DIR=build]
#   SIZE 4GiB is the issue's; 1GiB keeps dask's run within a few minutes on a
#   shared 2-core box. The data goes to $TMPDIR (default /tmp), removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=${1:-1GiB}
build=${2:-build}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" -j2 bench/bench_fft examples/demo >/dev/null
peer="$here/../peers/fft_dask.py"
measure="$here/../peers/rechunk_disk.py"

data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-fft-XXXXXX")
trap 'rm -rf "$data"' EXIT

echo "== kernels (one thread, best of 3; seconds) =="
{ "$build/bench/bench_fft"; "$python" "$peer" kernels; } > "$data/kernels.txt"
"$python" - "$data/kernels.txt" <<'PY'
import sys
t = {}
for line in open(sys.argv[1]):
    name, *fields = line.split()
    for field in fields:
        who, v = field.split("=")
        t.setdefault(name, {})[who] = v
# speedup: how many times faster the lanes are than Eigen's FFT (a hand-written
# kernel stays where it is at least 1.2x); used: the kernel fft_block picks.
print(f"{'case':<22}{'lanes':>8}{'Eigen':>8}{'numpy':>8}{'Eigen/lanes':>13}{'used':>7}{'used/numpy':>12}")
for name, v in t.items():
    lanes, eigen, numpy = (float(v[k]) for k in ("lanes", "eigen", "numpy"))
    used = lanes if v["auto"] == "lanes" else eigen
    print(f"{name:<22}{lanes:8.4f}{eigen:8.4f}{numpy:8.4f}{eigen / lanes:12.2f}x{v['auto']:>7}{used / numpy:11.2f}x")
PY

echo
echo "== out-of-core workflow on $size (2 workers, max-mem 512MiB) =="
"$build/examples/demo" --size "$size" --workers 2 --dir "$data" --keep 2>/dev/null > "$data/make.txt"
kept=$(sed -n 's/^kept the stores in //p' "$data/make.txt")
rm -rf "$kept/spectrum-columns.zarr"
image="$kept/image.zarr"
col_block=$(sed -n 's/.*spectrum blocks of \([0-9]*\) columns.*/\1/p' "$data/make.txt")
grep -E "planted|image store" "$data/make.txt"
cat "$image"/* >/dev/null  # both start from the page cache
out=$data/results.txt
{
  sync
  "$python" "$measure" measure tessera "$build/examples/demo" --input "$image" --workers 2 --max-mem 512MiB \
    --dir "$data" 2>/dev/null
  sync
  "$python" "$measure" measure dask "$python" "$peer" run "$image" "$data/dask-columns.zarr" "$col_block" 2
} | tee "$out"
"$python" - "$out" <<'PY'
import re, sys
rows, found = [], {}
who = None
for line in open(sys.argv[1]):
    m = re.match(r"(\w+) seconds=([\d.]+) peak_rss_mib=(\d+)", line)
    if m:
        rows.append((m[1], float(m[2]), int(m[3])))
    elif line.startswith("detected"):
        found[len(rows)] = line.split(":")[1].split("->")[0].split()
t = dict((r[0], r) for r in rows)
print(f"\n{'who':<10}{'seconds':>9}{'peak RSS MiB':>14}{'x dask':>8}")
for name, s, rss in rows:
    print(f"{name:<10}{s:9.1f}{rss:14d}{t['dask'][1] / s:7.2f}x")
print("both detect the same frequencies" if len(set(map(tuple, found.values()))) == 1 else f"DETECTIONS DIFFER: {found}")
PY
