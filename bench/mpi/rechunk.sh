#!/usr/bin/env bash
# The rechunk across processes, rows -> columns, side by side:
#  - tessera: `mpirun -n RANKS tessera rechunk SRC DST --chunks -1,256 --max-mem MAXMEM` (each rank one
#    worker thread, --max-mem per rank);
#  - dask.distributed: LocalCluster(n_workers=RANKS, threads_per_worker=1) running
#    da.from_zarr(SRC).rechunk((-1, 256)).to_zarr(DST).
# SRC is a float64 zarr v2 store (no compressor) of SIZE bytes, 16384 columns, in blocks of 256 rows.
# Each side's time is wall-clock for the whole command (start-up included); "rss" is the sum over the
# ranks (dask: the workers) of each one's peak resident memory, from getrusage; cpu is user + sys of
# the ranks (dask: of the workers, the scheduler and the client). Both outputs are checked equal.
# With RANKS above the cores, ranks share cores: compare the two sides' ratios, not absolute times.
#
# Usage: bench/mpi/rechunk.sh [SIZE=4GiB] [RANKS=4] [MAXMEM=1GiB] [BUILD_DIR=build]
#   SIZE=256MiB runs in seconds. Environment: TMPDIR (where the stores go; needs 3 x SIZE).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=${1:-4GiB}
ranks=${2:-4}
maxmem=${3:-1GiB}
build=${4:-build}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
ninja -C "$build" -j2 tools/tessera >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-mpi-XXXXXX")
trap 'rm -rf "$work"' EXIT
bytes=$("$python" -c "import re,sys; m=re.fullmatch(r'(\d+)([KMG]i?B)?', sys.argv[1]); print(int(m[1]) * {None:1,'KiB':2**10,'MiB':2**20,'GiB':2**30}[m[2]])" "$size")
cols=16384
rows=$((bytes / 8 / cols))
"$python" - "$work/src.zarr" "$rows" "$cols" <<'PY'
import sys, numpy as np, zarr
path, rows, cols = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
z = zarr.open(path, mode="w", shape=(rows, cols), chunks=(256, cols), dtype="f8", compressor=None)
rng = np.random.default_rng(0)
for r in range(0, rows, 256):
    z[r:r + 256] = rng.random((min(256, rows - r), cols))
PY

# tessera: each rank under GNU time, which writes its peak RSS (KiB) and CPU seconds.
start=$(date +%s.%N)
timeout 3000 mpirun -n "$ranks" --oversubscribe sh -c \
  '/usr/bin/time -f "%M %U %S" -o "$0/rank.$OMPI_COMM_WORLD_RANK" "$1" rechunk "$0/src.zarr" "$0/tessera.zarr" --chunks -1,256 --max-mem "$2" --workers 1' \
  "$work" "$build/tools/tessera" "$maxmem" 2>"$work/tessera.log" || { cat "$work/tessera.log" >&2; exit 1; }
end=$(date +%s.%N)
tessera_line=$(cat "$work"/rank.* | awk -v t="$(echo "$end - $start" | bc)" \
  '{rss += $1; cpu += $2 + $3} END {printf "%.1f %.1f %.0f", t, cpu, rss / 1024}')

# dask.distributed on as many worker processes.
dask_line=$("$python" "$here/dask_rechunk.py" "$work/src.zarr" "$work/dask.zarr" "$ranks" 2>"$work/dask.log") ||
  { cat "$work/dask.log" >&2; exit 1; }
"$python" - "$work/tessera.zarr" "$work/dask.zarr" <<'PY'
import sys, numpy as np, zarr
a, b = zarr.open(sys.argv[1], "r"), zarr.open(sys.argv[2], "r")
assert a.chunks == b.chunks, (a.chunks, b.chunks)
for c in range(0, a.shape[1], 256):
    assert np.array_equal(a[:, c:c + 256], b[:, c:c + 256]), c
PY
echo "rechunk rows -> columns: $size float64 ($rows x $cols, blocks of 256 rows -> 256 columns), $ranks ranks on $(nproc) cores, load average $(cut -d' ' -f1 /proc/loadavg)"
printf "%-34s %9s %12s %14s\n" "system" "time (s)" "cpu (s)" "sum peak RSS (MiB)"
read -r t c r <<<"$tessera_line"; printf "%-34s %9s %12s %14s\n" "tessera (mpirun, --max-mem $maxmem)" "$t" "$c" "$r"
read -r t c r <<<"$dask_line"; printf "%-34s %9s %12s %14s\n" "dask.distributed LocalCluster" "$t" "$c" "$r"
