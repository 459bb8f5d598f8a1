#!/usr/bin/env bash
# Reading compressed zarr into one array, side by side, in the shape of the public
# zarr v3 benchmarks: uint16, blosc blosclz level 9 with bitshuffle,
#   (a) zarr v2, 32^3 chunks (written by zarr-python 2.13)
#   (b) zarr v3, 256^3 shards of 32^3 inner chunks (tessera rechunk --shard from (a))
#   (c) zarr v3 uncompressed, 32^3 chunks (tessera rechunk from (a))
# tessera at 2 workers vs zarr-python + dask at 2 threads, vs the codec limit (c-blosc
# decompressing the same chunks from memory on 2 threads, into buffers allocated once),
# vs that limit plus reading the files and copying into one array (io-limit: what any
# reader pays that tessera cannot avoid), and zarrita (one thread: JavaScript) on (b) and (c). tessera reads twice: compute()
# into a fresh array (as dask's compute), and store() into one array allocated once
# (as the limit's buffers are: no page faults of fresh memory).
# Then the round trip: (a) rechunked to whole slices (1 x Y x X) and written as zarr v3
# zstd:3 by `tessera rechunk --max-mem 256MiB --method tasks`, vs
# da.from_zarr(a).rechunk(...).to_zarr(...) (zarr v2 zstd:3: zarr-python 2.13 writes no v3),
# with each one's peak RSS. tessera syncs its output to the disk before publishing it
# (storage/publish); dask does not, so dask also runs with an os.sync() after it. The round
# trip's floor is printed beside them: c-blosc decoding (a) plus zstd:3 encoding the output's
# slices from memory on 2 threads (zstd-limit), and the disk writing and syncing the bytes.
#
# Usage: scripts/bench zarr [BUILD_DIR=build] [SIZE=quarter|full|tiny] [REPEATS=3]
#   full is the benchmarks' 1 GiB (512 x 1024 x 1024); quarter (the default, for a
#   shared 2-core machine) is 256 MiB (256 x 512 x 1024).
# The data goes to $TMPDIR (default /tmp) and is removed at the end, also on error.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
size=${2:-quarter}
repeats=${3:-3}
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" -j2 bench/bench_zarr tools/tessera >/dev/null
case $size in
  full) shape="512 1024 1024" ;;
  quarter) shape="256 512 1024" ;;
  tiny) shape="64 256 512" ;;  # a check of the script itself
  *) echo "SIZE: expected quarter, full or tiny, found '$size'" >&2; exit 2 ;;
esac
modules=$root/build/npm/node_modules

data=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-zarr-XXXXXX")
trap 'rm -rf "$data"' EXIT
echo "writing ($shape) uint16 in $data ..." >&2
"$python" "$here/../peers/zarr_read.py" make "$data/a_v2_blosc.zarr" $shape
"$build/tools/tessera" rechunk "$data/a_v2_blosc.zarr" "$data/b_v3_sharded.zarr" --chunks 32,32,32 \
  --shard 256,256,256 --zarr-format 3 --codec blosc:blosclz:9:bitshuffle --workers 2 --no-progress 2>/dev/null
"$build/tools/tessera" rechunk "$data/a_v2_blosc.zarr" "$data/c_v3_raw.zarr" --chunks 32,32,32 \
  --zarr-format 3 --codec none --workers 2 --no-progress 2>/dev/null
# Every contestant finds the files in the page cache.
find "$data" -type f -exec cat {} + >/dev/null

out=$data/results.txt
{
  for c in a_v2_blosc b_v3_sharded c_v3_raw; do
    "$build/bench/bench_zarr" read "$data/$c.zarr" 2 "$repeats"
    "$build/bench/bench_zarr" into "$data/$c.zarr" 2 "$repeats"
  done
  for c in a_v2_blosc b_v3_sharded; do
    "$build/bench/bench_zarr" limit "$data/$c.zarr" 2 "$repeats"
    "$build/bench/bench_zarr" io-limit "$data/$c.zarr" 2 "$repeats"
  done
  "$python" "$here/../peers/zarr_read.py" dask "$data/a_v2_blosc.zarr" "$repeats" 2
  if [ -f "$modules/zarrita/package.json" ] && command -v node >/dev/null; then
    for c in b_v3_sharded c_v3_raw; do node "$here/../peers/zarr_zarrita.mjs" "$modules" "$data/$c.zarr" "$repeats"; done
  else
    echo "zarrita is not installed (scripts/setup installs it): its rows are left out" >&2
  fi
  peer="$here/../peers/zarr_read.py"
  "$python" "$peer" measure tessera roundtrip 2 "$repeats" "$build/tools/tessera" rechunk "$data/a_v2_blosc.zarr" \
    --chunks 1,-1,-1 --zarr-format 3 --codec zstd:3 --max-mem 256MiB --method tasks --workers 2 --no-progress \
    "$data/rt_tessera.zarr" 2>/dev/null
  "$build/bench/bench_zarr" sum "$data/rt_tessera.zarr" tessera roundtrip
  # The round trip's floor: zstd:3 encoding the output's slices from memory, and the disk writing them.
  "$build/bench/bench_zarr" zstd-limit "$data/rt_tessera.zarr" 2 "$repeats"
  "$python" "$peer" measure dask roundtrip 2 "$repeats" "$python" "$peer" roundtrip "$data/a_v2_blosc.zarr" 2 \
    "$data/rt_dask.zarr"
  "$build/bench/bench_zarr" sum "$data/rt_dask.zarr" dask roundtrip
  "$python" "$peer" measure dask-sync roundtrip 2 "$repeats" "$python" "$peer" roundtrip-sync "$data/a_v2_blosc.zarr" 2 \
    "$data/rt_dask.zarr"
} | tee "$out" >&2
du -sh "$data"/*.zarr >&2

"$python" "$here/table.py" "$out" $shape
