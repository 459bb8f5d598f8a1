#!/usr/bin/env bash
# Peak RSS of `tessera rechunk` under --max-mem, for each method: a float64
# .npy of GIB GiB (default 1) from rows to columns with --max-mem MAX (default
# 64MiB) and 2 workers, into (rows, 16) column blocks; the target is a peak
# RSS <= MAX + 100 MiB for each, and DST equal to SRC (checked with zarr-python).
#
# Usage: bench/rechunk/max_mem.sh [BUILD_DIR=build] [GIB=1] [MAX=64MiB]
# The data goes to $TMPDIR (default /tmp) and is removed at the end.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
gib=${2:-1}
max=${3:-64MiB}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
ninja -C "$build" tools/tessera >/dev/null
data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-maxmem-XXXXXX")
trap 'rm -rf "$data"' EXIT
"$python" - "$data/src.npy" "$gib" <<'PY'
import sys, numpy as np
path, gib = sys.argv[1], float(sys.argv[2])
cols = 4096
rows = int(gib * 2**30 / 8 / cols)
a = np.lib.format.open_memmap(path, mode="w+", dtype="<f8", shape=(rows, cols))
for i in range(0, rows, 4096):
    a[i:i + 4096] = np.arange(i, min(i + 4096, rows))[:, None]
a.flush()
PY
limit_kib=$(( $("$python" -c "print(int(__import__('re').sub('[^0-9]', '', '$max')))") * 1024 + 100 * 1024 ))
printf '%-8s %14s %14s  %s\n' method peak_rss_MiB target_MiB verdict
for method in auto tasks shuffle; do
  rm -rf "$data/dst.zarr"
  if out=$(/usr/bin/time -f '%M' "$build/tools/tessera" rechunk "$data/src.npy" "$data/dst.zarr" --chunks -1,16 \
             --max-mem "$max" --workers 2 --method "$method" --no-progress 2>&1); then
    kib=$(tail -1 <<<"$out")
    verdict=$([ "$kib" -le "$limit_kib" ] && echo ok || echo OVER)
    "$python" -c "import sys, numpy as np, zarr; sys.exit(0 if np.array_equal(np.load(sys.argv[1], mmap_mode='r'), zarr.open(sys.argv[2], mode='r')[...]) else 1)" \
      "$data/src.npy" "$data/dst.zarr" || verdict="$verdict, WRONG VALUES"
    printf '%-8s %14d %14d  %s\n' "$method" $((kib / 1024)) $((limit_kib / 1024)) "$verdict"
  else
    printf '%-8s failed: %s\n' "$method" "$(tail -2 <<<"$out" | head -1)"
  fi
done
