#!/usr/bin/env bash
# Rechunks rows to columns, side by side in one run:
#  1. in memory: a float64 array of GIB GiB from row blocks (256, N) to column
#     blocks (N, 256) by tessera's tasks, fused and shuffle methods at 1 and 2
#     workers, vs dask.array.rechunk computed by dask's threaded scheduler into
#     a numpy array, vs memcpy (bench_rechunk prints the table);
#  2. on disk: a float64 zarr of DISK_GIB GiB from chunks (256, N) to (N, 256):
#     `tessera rechunk --max-mem 512MiB --workers 2` (shards written straight
#     into the chunk files: rechunk_store) vs
#     da.from_zarr(...).rechunk(...).to_zarr(...) at 2 workers vs `cp -r` of the
#     same bytes: time and peak RSS of each;
#  3. under --max-mem 64MiB: peak RSS of each method on a 1 GiB .npy from rows
#     to columns (max_mem.sh), against the bound --max-mem + 100 MiB.
#  4. a 1024 x 1024 uint8 store of 1 x 1 chunks (2^20 files) rechunked under
#     --max-mem 64MiB, against the same bytes in one chunk and `cat` (tiny_chunks.sh).
#
# Usage: bench/rechunk/run.sh [BUILD_DIR=build] [GIB=1] [DISK_GIB=4] [REPEATS=3]   (GIB=0: on disk only)
# The data goes to $TMPDIR (default /tmp) and is removed at the end, also on error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
gib=${2:-1}
disk_gib=${3:-4}
repeats=${4:-3}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" bench/bench_rechunk tools/tessera >/dev/null
peer="$here/../peers/rechunk_disk.py"

# Rows x cols with cols = rows / 2, as close to the asked size as 256-row blocks allow.
shape() { "$python" -c "import math; r = int(math.sqrt($1 * 2**30 / 8 * 2)) // 512 * 512; print(r, r // 2)"; }

if [ "$gib" != 0 ]; then  # GIB=0 skips the in-memory part
  echo "== in memory =="
  read -r rows cols < <(shape "$gib")
  "$build/bench/bench_rechunk" --rows "$rows" --cols "$cols" --block 256 --repeat "$repeats" --workers 1,2
fi

echo
echo "== on disk =="
data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-rechunk-XXXXXX")
trap 'rm -rf "$data"' EXIT
read -r rows cols < <(shape "$disk_gib")
echo "writing a ${rows} x ${cols} float64 zarr in (256, ${cols}) chunks to $data ..." >&2
"$python" "$peer" make "$data/src.zarr" "$rows" "$cols" 256
cat "$data"/src.zarr/* >/dev/null  # every contestant starts from the page cache
out=$data/results.txt
# Each contestant starts with no dirty pages left by the one before (sync, not
# timed): otherwise the kernel's writeback of 4 GiB throttles whoever comes next.
{
  sync
  "$python" "$peer" measure "cp" cp -r "$data/src.zarr" "$data/cp.zarr"
  rm -rf "$data/cp.zarr"
  sync
  "$python" "$peer" measure "tessera" "$build/tools/tessera" rechunk "$data/src.zarr" "$data/t.zarr" \
    --chunks -1,256 --max-mem 512MiB --workers 2 --no-progress
  "$python" "$peer" check "$data/src.zarr" "$data/t.zarr" 256
  rm -rf "$data/t.zarr"
  sync
  "$python" "$peer" measure "dask" "$python" "$peer" dask "$data/src.zarr" "$data/d.zarr" 256 2
  "$python" "$peer" check "$data/src.zarr" "$data/d.zarr" 256
} | tee "$out" >&2
"$python" - "$out" "$rows" "$cols" <<'PY'
import sys
rows = {}
for line in open(sys.argv[1]):
    name, *fields = line.split()
    rows[name] = dict((k, float(v)) for k, v in (f.split("=") for f in fields))
r, c = int(sys.argv[2]), int(sys.argv[3])
print(f"\nrechunk a {r} x {c} float64 zarr ({r * c * 8 / 2**30:.2f} GiB) from (256, {c}) to ({r}, 256), 2 workers")
print("| who | seconds | x cp | peak RSS MiB |")
print("| --- | --- | --- | --- |")
for name, label in [("tessera", "tessera rechunk --max-mem 512MiB"), ("dask", "dask from_zarr.rechunk.to_zarr"), ("cp", "cp -r")]:
    f = rows[name]
    print(f"| {label} | {f['seconds']:.2f} | {f['seconds'] / rows['cp']['seconds']:.2f} | {f['peak_rss_mib']:.0f} |")
PY

echo
echo "== peak RSS under --max-mem 64MiB, each method (1 GiB rows -> columns) =="
"$here/max_mem.sh" "$build" 1 64MiB

echo
echo "== a store of 2^20 one-byte chunks under --max-mem 64MiB (tiny_chunks.sh) =="
"$here/tiny_chunks.sh" "$build" 1024 1
