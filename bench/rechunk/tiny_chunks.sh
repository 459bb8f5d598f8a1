#!/usr/bin/env bash
# A store of tiny chunks, rechunked under --max-mem 64MiB (issue 25, item 1):
# a SIDE x SIDE uint8 zarr v2 store in 1 x 1 chunks (SIDE=1024: 2^20 chunk files
# of one byte) rechunked into (256, 256) chunks by `tessera rechunk --max-mem
# 64MiB --workers 2`, beside
#   - large: the same bytes in one (SIDE, SIDE) chunk rechunked the same way
#     (the speed of reading the same bytes in large chunks);
#   - sharded: the same 1 x 1 chunks as inner chunks of (256, 256) v3 shards;
#   - cat: `cat` of every chunk file, one process (the file system's floor:
#     each chunk is a file to open, read and close whoever reads it);
#   - floor: bench/rechunk/syscall_floor.c, the system calls every reader of
#     such a store makes per chunk file (open, fstat, pread, close) and nothing
#     else, on 2 threads as tessera's 2 workers;
#   - fixed: a 4 x 4 store, the fixed cost of any run (process start, plan,
#     publish), to read the sharded ratio with that cost taken off both sides.
# Prints each one's time and peak RSS, and the ratios of tessera's speed to the
# other two; the target is a peak RSS within 64 MiB + 100 MiB.
#
# Usage: bench/rechunk/tiny_chunks.sh [BUILD_DIR=build] [SIDE=1024] [REPEATS=3]
# Writing 2^20 files takes a minute or two. The data goes to $TMPDIR (default
# /tmp) and is removed at the end, also on error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
side=${2:-1024}
repeats=${3:-3}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
ninja -C "$build" tools/tessera >/dev/null
data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-tiny-XXXXXX")
trap 'rm -rf "$data"' EXIT
echo "writing a ${side} x ${side} uint8 zarr in 1 x 1 chunks to $data ..." >&2
"$python" - "$data" "$side" <<'PY'
import json, os, sys
import numpy as np
data, n = sys.argv[1], int(sys.argv[2])
a = (np.arange(n * n, dtype=np.uint64) * 2654435761 % 251).astype(np.uint8).reshape(n, n)
for name, c in (("tiny.zarr", 1), ("large.zarr", n)):
    os.makedirs(f"{data}/{name}")
    with open(f"{data}/{name}/.zarray", "w") as f:
        json.dump({"zarr_format": 2, "shape": [n, n], "chunks": [c, c], "dtype": "|u1", "compressor": None,
                   "filters": None, "fill_value": 0, "order": "C"}, f)
    for i in range(n // c):
        for j in range(n // c):
            fd = os.open(f"{data}/{name}/{i}.{j}", os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            os.write(fd, a[i * c:(i + 1) * c, j * c:(j + 1) * c].tobytes())
            os.close(fd)
np.save(f"{data}/expected.npy", a)
# The fixed cost of a run (process start, plan, publish): a 4 x 4 store in 2 x 2 chunks.
os.makedirs(f"{data}/fixed.zarr")
with open(f"{data}/fixed.zarr/.zarray", "w") as f:
    json.dump({"zarr_format": 2, "shape": [4, 4], "chunks": [2, 2], "dtype": "|u1", "compressor": None,
               "filters": None, "fill_value": 0, "order": "C"}, f)
for i in range(2):
    for j in range(2):
        with open(f"{data}/fixed.zarr/{i}.{j}", "wb") as f:
            f.write(a[2 * i:2 * i + 2, 2 * j:2 * j + 2].tobytes())
PY
# The best of REPEATS runs of each: seconds (bash's microsecond clock: GNU
# time's 10 ms steps are the whole of a sharded or large-chunk run) and peak
# RSS (KiB, from GNU time).
best() {
  local name=$1 out=$data/$1.out
  shift
  local sec="" kib=""
  for _ in $(seq "$repeats"); do
    rm -rf "$data/out.zarr"
    local t0=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$data/time.txt" "$@" >/dev/null 2>"$data/err.txt" || { cat "$data/err.txt" >&2; exit 1; }
    local s
    s=$(awk "BEGIN { printf \"%.4f\", $EPOCHREALTIME - $t0 }")
    read -r k <"$data/time.txt"
    if [ -z "$sec" ] || awk "BEGIN { exit !($s < $sec) }"; then sec=$s; kib=$k; fi
  done
  echo "$name $sec $kib" | tee -a "$data/results.txt" >&2
}
# The same 1 x 1 chunks as inner chunks of (256, 256) shards (zarr v3, written by tessera):
# 16 files, so what is left is the per-chunk work inside a shard, not the file system's.
"$build/tools/tessera" rechunk "$data/expected.npy" "$data/sharded.zarr" --chunks 1,1 --shard 256,256 \
  --zarr-format 3 --max-mem 64MiB --no-progress >/dev/null 2>&1
find "$data/tiny.zarr" -type f -exec cat {} + >/dev/null  # every contestant starts from the page cache
cc -O2 -pthread -o "$data/syscall_floor" "$here/syscall_floor.c"
best floor "$data/syscall_floor" "$data/tiny.zarr" "$side" 2
best cat sh -c "find '$data/tiny.zarr' -name '*.*' -type f -exec cat {} + >/dev/null"
best fixed "$build/tools/tessera" rechunk "$data/fixed.zarr" "$data/out.zarr" --chunks 256,256 \
  --max-mem 64MiB --workers 2 --no-progress
for store in large tiny sharded; do
  best "$store" "$build/tools/tessera" rechunk "$data/$store.zarr" "$data/out.zarr" --chunks 256,256 \
    --max-mem 64MiB --workers 2 --no-progress
  "$python" -c "import sys, numpy as np, zarr; sys.exit(0 if np.array_equal(np.load(sys.argv[1]), zarr.open(sys.argv[2], mode='r')[...]) else 1)" \
    "$data/expected.npy" "$data/out.zarr" || { echo "$store: WRONG VALUES" >&2; exit 1; }
done
"$python" - "$data/results.txt" "$side" <<'PY'
import sys
rows = {name: (float(s), int(k)) for name, s, k in (line.split() for line in open(sys.argv[1]))}
n = int(sys.argv[2])
print(f"\nrechunk a {n} x {n} uint8 zarr ({n * n} chunks of 1 x 1) to (256, 256) under --max-mem 64MiB, 2 workers")
print("| who | seconds | peak RSS MiB |")
print("| --- | --- | --- |")
labels = {"tiny": "tessera rechunk, 1 x 1 chunks", "large": f"tessera rechunk, one ({n}, {n}) chunk",
          "cat": "cat of every 1 x 1 chunk file (1 process)",
          "floor": "open, fstat, pread, close of every chunk file and nothing else (2 threads)",
          "sharded": "tessera rechunk, 1 x 1 inner chunks in (256, 256) shards",
          "fixed": "tessera rechunk, a 4 x 4 store (the fixed cost of a run)"}
for name in ("tiny", "sharded", "large", "floor", "cat", "fixed"):
    s, k = rows[name]
    print(f"| {labels[name]} | {s:.3f} | {k / 1024:.0f} |")
tiny = rows["tiny"][0]
print(f"speed of the 1 x 1 rechunk: {rows['large'][0] / tiny:.3f} of the large-chunk one (target 0.5), "
      f"{rows['cat'][0] / tiny:.2f} x cat's, {rows['floor'][0] / tiny:.2f} of the system calls' floor")
half = 2 * rows["large"][0]
print(f"half the large-chunk speed means the whole 1 x 1 run in {half * 1e3:.1f} ms, {half * 1e9 / (n * n):.0f} ns "
      f"per chunk file; the system calls alone take {rows['floor'][0] * 1e9 / (n * n):.0f} ns per file")
fixed = rows["fixed"][0]
print(f"speed of the sharded 1 x 1 rechunk: {rows['large'][0] / rows['sharded'][0]:.3f} of the large-chunk one "
      f"(target 0.5); less the fixed cost of each: {(rows['large'][0] - fixed) / max(rows['sharded'][0] - fixed, 1e-6):.3f}")
print(f"peak RSS {rows['tiny'][1] / 1024:.0f} MiB, target <= {64 + 100} MiB: "
      f"{'ok' if rows['tiny'][1] <= (64 + 100) * 1024 else 'OVER'}")
PY
