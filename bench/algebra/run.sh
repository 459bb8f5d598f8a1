#!/usr/bin/env bash
# Array algebra side by side, in one run, at WORKERS threads each:
#  - matmul of two 8192 x 8192 float64 arrays in 1024^2 blocks: tessera (one
#    Eigen GEMM task per block pair, a tree of sums) against one Eigen GEMM over
#    the whole arrays on the same number of threads (OpenMP; the limit tessera's
#    throughput is measured against) and against dask + numpy;
#  - on a 16384 x 16384 float32 array in 2048^2 blocks: map_overlap of a 3 x 3
#    mean (reflect), cumsum along axis 0, where(x > 0.5, x, 0), argmax along
#    axis 0, each against dask;
#  - each block kernel of the array operations (cumsum's scan, element-wise,
#    comparisons, where, isnan, astype, sum, max, argmax, a transposed copy) on
#    one 2048^2 float32 and float64 block, beside the Eigen Tensor expression
#    on the same memory (bench/algebra/kernels.cpp).
# Inputs are in memory before the clock starts (dask: persist()); each result is
# assembled into one array (compute()). Times are the best of REPEATS runs.
#
# Usage: scripts/bench algebra [SCALE=1] [REPEATS=3] [WORKERS=2] [BUILD_DIR=build]
#   SCALE divides every extent and block size: 4 runs the same graphs on 1/16
#   of the data in well under a minute. Environment: ALGEBRA_MATMUL_REPEATS
#   (default 1) for dask's matmul, which takes minutes at SCALE 1 on Debian's
#   reference BLAS; 0 leaves the matmul row out (tessera's and Eigen's too).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scale=${1:-1}
repeats=${2:-3}
workers=${3:-2}
build=${4:-build}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" -j2 bench/bench_algebra bench/bench_algebra_eigen >/dev/null

out=$(mktemp "${TMPDIR:-/tmp}/tessera-bench-algebra-XXXXXX")
trap 'rm -f "$out"' EXIT
matmul_repeats=${ALGEBRA_MATMUL_REPEATS:-1}
{
  if [ "$matmul_repeats" -gt 0 ]; then
    "$build/bench/bench_algebra_eigen" "$scale" "$repeats" "$workers"
    "$build/bench/bench_algebra" "$scale" "$repeats" "$workers"
  else  # the other rows only, e.g. with more repeats than the matmul's minutes allow
    "$build/bench/bench_algebra" "$scale" "$repeats" "$workers" map_overlap,cumsum,kernel,where,argmax
  fi
  "$python" "$here/../peers/algebra_dask.py" "$scale" "$repeats" "$workers" "$matmul_repeats"
} | tee "$out" >&2

"$python" - "$out" "$scale" "$workers" <<'PY'
import sys
t, threads, kernels = {}, None, []
for line in open(sys.argv[1]):
    name, who, *fields = line.split()
    if name == "kernel":
        k = dict(x.split("=", 1) for x in fields)
        k["name"] = who
        kernels.append(k)
        continue
    f = dict(x.split("=", 1) for x in fields)
    threads = f.get("threads", threads)
    t.setdefault(name, {})[who] = (float(f["best"]), float(f["check"]))
scale, workers = int(sys.argv[2]), sys.argv[3]
n, m = 8192 // scale, 16384 // scale
what = {
    "matmul": f"matmul {n}^2 f64, {1024 // scale}^2 blocks",
    "map_overlap": f"map_overlap 3x3 mean {m}^2 f32",
    "cumsum": f"cumsum axis 0 {m}^2 f32",
    "where": f"where(x > 0.5, x, 0) {m}^2 f32",
    "argmax": f"argmax axis 0 {m}^2 f32",
}
print(f"\nbest of runs, seconds, {workers} threads each ({m}^2 f32 arrays in {2048 // scale}^2 blocks)")
print(f"{'operation':<36}{'tessera':>9}{'dask':>9}{'dask/tessera':>14}  check")
for name, label in what.items():
    if name not in t:
        continue
    (ts, tc), (ds, dc) = t[name]["tessera"], t[name]["dask"]
    same = abs(tc - dc) <= 1e-5 * max(abs(dc), 1.0)
    print(f"{label:<36}{ts:9.3f}{ds:9.3f}{ds / ts:13.2f}x  {'agree' if same else f'DIFFER {tc:.6e} vs {dc:.6e}'}")
if "matmul" in t:
    es, ec = t["matmul"]["eigen"]
    ts = t["matmul"]["tessera"][0]
    print(f"\nmatmul: one Eigen GEMM over the whole arrays on {threads} threads (Eigen::nbThreads): {es:.3f} s; "
          f"tessera at {100 * es / ts:.0f}% of its throughput ({2 * n ** 3 / ts / 1e9:.1f} GFLOP/s against "
          f"{2 * n ** 3 / es / 1e9:.1f}){'' if abs(ec - t['matmul']['tessera'][1]) <= 1e-9 * abs(ec) else ' CHECKS DIFFER'}")
print("(dask/tessera above 1: tessera is faster)")
if kernels:
    print("\nblock kernels, one thread, best of runs, seconds: what tessera runs today beside the Eigen Tensor")
    print("expression on the same block (a kernel stays hand-written only where it is 1.2x faster or more)")
    print(f"{'kernel':<36}{'tessera':>10}{'eigen':>10}{'eigen/tessera':>15}")
    for k in kernels:
        ts, es = float(k["tessera"]), float(k["eigen"])
        print(f"{k['name']:<36}{ts:10.6f}{es:10.6f}{es / max(ts, 1e-9):14.2f}x"
              f"{'' if k['same'] == '1' else '  RESULTS DIFFER'}")
PY
