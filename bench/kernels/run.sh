#!/usr/bin/env bash
# tessera's dispatched kernels against the reference libraries, in one run, at
# WORKERS threads each (issue 47's targets):
#  - matmul of two 8192^2 float64 (and float32) arrays in 1024^2 blocks: tessera
#    with the kernel set chosen for this CPU, tessera forced to the baseline
#    (TESSERA_ISA=sse2), dask + numpy on OpenBLAS (Debian's libopenblas0-pthread,
#    one BLAS thread per task), all against OpenBLAS's dgemm / sgemm over the
#    whole arrays on WORKERS threads (bench/kernels/gemm_openblas.cpp).
# Inputs are in memory before the clock starts; times are the best of REPEATS runs.
#
# Usage: scripts/bench kernels [SCALE=1] [REPEATS=3] [WORKERS=2] [BUILD_DIR=build-bench]
#   SCALE divides every extent and block size (4: 1/64 of the work, seconds).
#   BUILD_DIR is configured with -Dbench=true if it is not already.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
scale=${1:-1}
repeats=${2:-3}
workers=${3:-2}
build=${4:-build-bench}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" -j2 bench/bench_algebra bench/bench_gemm_openblas tools/tessera >/dev/null

out=$(mktemp "${TMPDIR:-/tmp}/tessera-bench-kernels-XXXXXX")
trap 'rm -f "$out"' EXIT
# OpenBLAS picks its kernel by the CPU unless these say otherwise: unset for the peers alone.
openblas=(env -u OPENBLAS_CORETYPE -u OPENBLAS_L2_SIZE)
# It picks by the CPU's model number, and a model newer than the release (Debian 12's 0.3.21
# knows no Emerald Rapids) falls back to Prescott's SSE3 kernels, a weak peer. Then the peers
# run the kernel of the widest instructions the CPU has, so that the reference is OpenBLAS's
# real limit on this machine (the line "openblas core" says which ran, and why).
detected=$("${openblas[@]}" "$build/bench/bench_gemm_openblas" core)
forced=""
if [ "$detected" = Prescott ] || [ "$detected" = Core2 ]; then
  if grep -qw avx512f /proc/cpuinfo; then forced=SkylakeX; elif grep -qw avx2 /proc/cpuinfo; then forced=Haswell; fi
  [ -z "$forced" ] || openblas+=(OPENBLAS_CORETYPE=$forced)
fi
{
  echo "isa dispatched $("$build/tools/tessera" info --cpu | tr '\n' ';')"
  echo "openblas core detected=$detected${forced:+ forced=$forced (OPENBLAS_CORETYPE: the detected kernel is older than the CPU)}"
  "${openblas[@]}" "$build/bench/bench_gemm_openblas" "$scale" "$repeats" "$workers"
  "$build/bench/bench_algebra" "$scale" "$repeats" "$workers" matmul,matmul_f32
  TESSERA_ISA=sse2 "$build/bench/bench_algebra" "$scale" "$repeats" "$workers" matmul,matmul_f32 |
    sed 's/ tessera / tessera_sse2 /'
  "${openblas[@]}" LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \
    "$python" "$root/bench/peers/kernels_dask.py" "$scale" "$repeats" "$workers"
} | tee "$out" >&2

"$python" - "$out" "$scale" "$workers" <<'PY'
import sys
t, notes = {}, []
for line in open(sys.argv[1]):
    name, who, *fields = line.split()
    if name in ("isa", "blas", "openblas"):
        notes.append(f"{name} ({who}): {' '.join(fields)}")
        continue
    f = dict(x.split("=", 1) for x in fields if "=" in x)
    t.setdefault(name, {})[who] = (float(f["best"]), float(f["check"]), f.get("core", ""))
scale, workers = int(sys.argv[2]), sys.argv[3]
n, b = 8192 // scale, 1024 // scale
print(f"\nbest of runs, {workers} threads each; throughput as a share of OpenBLAS's GEMM over the whole arrays")
print(f"{'operation':<34}{'who':<16}{'seconds':>9}{'GFLOP/s':>9}{'of OpenBLAS':>13}  check")
for name, label in (("matmul", f"matmul {n}^2 f64, {b}^2 blocks"), ("matmul_f32", f"matmul {n}^2 f32, {b}^2 blocks")):
    if name not in t or "openblas" not in t[name]:
        continue
    ref, ref_check, core = t[name]["openblas"]
    for who in ("openblas", "tessera", "tessera_sse2", "dask"):
        if who not in t[name]:
            continue
        s, c, _ = t[name][who]
        same = abs(c - ref_check) <= 1e-4 * abs(ref_check)
        print(f"{label:<34}{who:<16}{s:9.3f}{2 * n ** 3 / s / 1e9:9.1f}{100 * ref / s:12.0f}%  "
              f"{'agree' if same else f'DIFFER {c:.6e} vs {ref_check:.6e}'}")
    print(f"{'':<34}(OpenBLAS kernel: {core})")
for note in notes:
    print(note)
PY
