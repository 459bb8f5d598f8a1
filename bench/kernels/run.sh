#!/usr/bin/env bash
# tessera's dispatched kernels against the reference libraries, in one run, at
# WORKERS threads each (issue 47's targets):
#  - matmul of two 8192^2 float64 (and float32) arrays in 1024^2 blocks: tessera
#    with the kernel set chosen for this CPU, tessera forced to the baseline
#    (TESSERA_ISA=sse2), dask + numpy on OpenBLAS (Debian's libopenblas0-pthread,
#    one BLAS thread per task), all against OpenBLAS's dgemm / sgemm over the
#    whole arrays on WORKERS threads (bench/kernels/gemm_openblas.cpp).
#  - sum, mean, std of a 4 GiB float32 array in memory (64 MiB blocks) and the
#    element-wise (x - mean) / std, as bandwidth against a STREAM-style triad run
#    in the same process on WORKERS threads (bench/kernels/memory_bench.cpp),
#    with the dispatched set and with TESSERA_ISA=sse2;
#  - the FFT kernel (fft_lanes.hpp, not yet per instruction set: SSE2 everywhere) on
#    bench_fft's rows and columns beside FFTW 3 with FFTW_MEASURE plans, one thread each
#    (bench/kernels/fft_fftw.cpp).
# Inputs are in memory before the clock starts; times are the best of REPEATS runs.
#
# Usage: scripts/bench kernels [SCALE=1] [REPEATS=3] [WORKERS=2] [BUILD_DIR=build-bench]
#   SCALE divides every extent and block size (4: 1/64 of the work, seconds), and the
#   memory rows' 4 GiB (the FFT rows keep their sizes). KERNELS_ROWS=matmul, memory or fft
#   (or a comma-separated list) runs those groups alone.
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
ninja -C "$build" -j2 bench/bench_algebra bench/bench_gemm_openblas bench/bench_kernels_memory tools/tessera \
  bench/bench_fft bench/bench_fft_fftw >/dev/null
rows=${KERNELS_ROWS:-matmul,memory,fft}

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
  if [[ ,$rows, = *,matmul,* ]]; then
    "${openblas[@]}" "$build/bench/bench_gemm_openblas" "$scale" "$repeats" "$workers"
    "$build/bench/bench_algebra" "$scale" "$repeats" "$workers" matmul,matmul_f32
    TESSERA_ISA=sse2 "$build/bench/bench_algebra" "$scale" "$repeats" "$workers" matmul,matmul_f32 |
      sed 's/ tessera / tessera_sse2 /'
    "${openblas[@]}" LD_LIBRARY_PATH=/usr/lib/x86_64-linux-gnu/openblas-pthread \
      "$python" "$root/bench/peers/kernels_dask.py" "$scale" "$repeats" "$workers"
  fi
  if [[ ,$rows, = *,memory,* ]]; then
    gib=$(awk "BEGIN { print 4 / $scale }")
    "$build/bench/bench_kernels_memory" "$gib" "$repeats" "$workers"
    TESSERA_ISA=sse2 "$build/bench/bench_kernels_memory" "$gib" "$repeats" "$workers" | sed 's/^\([a-z]*\) [a-z]* /\1 sse2 /'
  fi
  if [[ ,$rows, = *,fft,* ]]; then
    "$build/bench/bench_fft_fftw" | sed 's/^\([^ ]*\) fftw=/fft-\1 fftw best=/'
    "$build/bench/bench_fft" | sed 's/^\([^ ]*\) lanes=\([^ ]*\) eigen=\([^ ]*\) auto=\(.*\)/fft-\1 tessera best=\2 eigen=\3 auto=\4/'
  fi
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
    t.setdefault(name, {})[who] = (float(f["best"]), float(f.get("check", 0)), f.get("core", ""), float(f.get("gbps", 0)))
    if name.startswith("fft-") and who == "tessera" and f.get("auto") == "eigen":
        t[name][who] = (float(f["eigen"]),) + t[name][who][1:]
scale, workers = int(sys.argv[2]), sys.argv[3]
n, b = 8192 // scale, 1024 // scale
if "matmul" in t:
    print(f"\nbest of runs, {workers} threads each; throughput as a share of OpenBLAS's GEMM over the whole arrays")
    print(f"{'operation':<34}{'who':<16}{'seconds':>9}{'GFLOP/s':>9}{'of OpenBLAS':>13}  check")
for name, label in (("matmul", f"matmul {n}^2 f64, {b}^2 blocks"), ("matmul_f32", f"matmul {n}^2 f32, {b}^2 blocks")):
    if name not in t or "openblas" not in t[name]:
        continue
    ref, ref_check, core = t[name]["openblas"][:3]
    for who in ("openblas", "tessera", "tessera_sse2", "dask"):
        if who not in t[name]:
            continue
        s, c = t[name][who][:2]
        same = abs(c - ref_check) <= 1e-4 * abs(ref_check)
        print(f"{label:<34}{who:<16}{s:9.3f}{2 * n ** 3 / s / 1e9:9.1f}{100 * ref / s:12.0f}%  "
              f"{'agree' if same else f'DIFFER {c:.6e} vs {ref_check:.6e}'}")
    print(f"{'':<34}(OpenBLAS kernel: {core})")
triads = {who: t["triad"][who] for who in t.get("triad", {})}
if triads:
    print(f"\nmemory-bound rows, {workers} threads, float32: bandwidth as a share of the STREAM triad of the same process")
    print(f"{'operation':<34}{'who':<16}{'seconds':>9}{'GB/s':>9}{'of triad':>10}")
    for name in ("sum", "mean", "std", "standardize"):
        for who, triad_who in (("tessera", "stream"), ("sse2", "sse2")):
            if name in t and who in t[name]:
                s, gbps = t[name][who][0], t[name][who][3]
                print(f"{name:<34}{who:<16}{s:9.3f}{gbps:9.2f}{100 * gbps / triads[triad_who][3]:9.0f}%")
    for who, v in triads.items():
        print(f"{'triad':<34}{'(' + who + ' run)':<16}{v[0]:9.3f}{v[3]:9.2f}")
ffts = [name for name in t if name.startswith("fft-") and "fftw" in t[name] and "tessera" in t[name]]
if ffts:
    print("\nFFT kernels, one thread, best of 3: tessera's (the lanes, or Eigen's where fft_block picks it) against FFTW_MEASURE")
    print(f"{'transform':<34}{'tessera s':>10}{'FFTW s':>10}{'of FFTW':>9}")
    for name in ffts:
        f = t[name]["fftw"][0]
        s = t[name]["tessera"][0]
        print(f"{name[4:]:<34}{s:10.4f}{f:10.4f}{100 * f / s:8.0f}%")
for note in notes:
    print(note)
PY
