#!/usr/bin/env bash
# Reading compressed zarr into one array, side by side, in the shape of the public
# zarr v3 benchmarks: uint16, blosc blosclz level 9 with bitshuffle,
#   (a) zarr v2, 32^3 chunks (written by zarr-python 2.13)
#   (b) zarr v3, 256^3 shards of 32^3 inner chunks (tessera rechunk --shard from (a))
#   (c) zarr v3 uncompressed, 32^3 chunks (tessera rechunk from (a))
# tessera at 2 workers vs zarr-python + dask at 2 threads, vs the codec limit (c-blosc
# decompressing the same chunks from memory on 2 threads, into buffers allocated once),
# and zarrita (one thread: JavaScript) on (b) and (c). tessera reads twice: compute()
# into a fresh array (as dask's compute), and store() into one array allocated once
# (as the limit's buffers are: no page faults of fresh memory).
# Then the round trip: (a) rechunked to whole slices (1 x Y x X) and written as zarr v3
# zstd:3 by `tessera rechunk --max-mem 256MiB --method tasks`, vs
# da.from_zarr(a).rechunk(...).to_zarr(...) (zarr v2 zstd:3: zarr-python 2.13 writes no v3),
# with each one's peak RSS. tessera syncs its output to the disk before publishing it
# (storage/publish); dask does not, so dask also runs with an os.sync() after it.
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
[ -d "$build/meson-private" ] || meson setup "$build" -Dbench=true >/dev/null
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
  for c in a_v2_blosc b_v3_sharded; do "$build/bench/bench_zarr" limit "$data/$c.zarr" 2 "$repeats"; done
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
  "$python" "$peer" measure dask roundtrip 2 "$repeats" "$python" "$peer" roundtrip "$data/a_v2_blosc.zarr" 2 \
    "$data/rt_dask.zarr"
  "$build/bench/bench_zarr" sum "$data/rt_dask.zarr" dask roundtrip
  "$python" "$peer" measure dask-sync roundtrip 2 "$repeats" "$python" "$peer" roundtrip-sync "$data/a_v2_blosc.zarr" 2 \
    "$data/rt_dask.zarr"
} | tee "$out" >&2
du -sh "$data"/*.zarr >&2

"$python" - "$out" "$shape" <<'PY'
import sys
rows, sums = [], {}
for line in open(sys.argv[1]):
    name, *fields = line.split()
    f = dict(x.split("=", 1) for x in fields)
    case = f["case"].removesuffix(".zarr")
    if "best" not in f:  # a round trip's output sum
        sums[(name, case)] = int(f["sum"])
        continue
    rows.append(dict(who=name, case=case, best=float(f["best"]), median=float(f["median"]),
                     sum=int(f.get("sum", -1)), rss=f.get("peak_rss_mib")))
def find(who, case):
    return next((r for r in rows if r["who"] == who and r["case"] == case), None)
shape = tuple(int(v) for v in sys.argv[2].split())
gib = shape[0] * shape[1] * shape[2] * 2 / 2**30
print(f"\nread all of a {shape} uint16 array ({gib:g} GiB) into one array; wall seconds, best of runs")
print(f"{'case':<14}{'who':<40}{'best s':>8}{'median s':>10}{'GiB/s':>7}  vs")
labels = {"tessera": "tessera compute() (2 workers)", "tessera-into": "tessera store into one array (2 workers)",
          "dask": "zarr-python + dask (2 threads)", "blosc-limit": "c-blosc from memory (2 threads)",
          "zarrita": "zarrita (node, 1 thread)"}
for case in ["a_v2_blosc", "b_v3_sharded", "c_v3_raw"]:
    t, ti = find("tessera", case), find("tessera-into", case)
    for who in ["tessera", "tessera-into", "dask", "blosc-limit", "zarrita"]:
        r = find(who, case)
        if r is None:
            continue
        vs = ""
        if who in ("dask", "zarrita"):
            vs = f"tessera compute() is {r['best'] / t['best']:.1f}x faster"
        elif who == "blosc-limit":
            vs = (f"tessera reaches {100 * r['best'] / t['best']:.0f}% of it (compute), "
                  f"{100 * r['best'] / ti['best']:.0f}% (into one array)")
        print(f"{case:<14}{labels[who]:<40}{r['best']:8.3f}{r['median']:10.3f}{gib / r['best']:7.2f}  {vs}")
read_sums = {r["sum"] for r in rows if r["who"] not in ("blosc-limit",) and r["case"] != "roundtrip"}
print("all readers read the same values (sums agree)" if len(read_sums) == 1 else f"SUMS DIFFER: {sorted(read_sums)}")

print(f"\nround trip: read (a), rechunk to (1, {shape[1]}, {shape[2]}) slices, write zstd:3; "
      "wall seconds, best of runs")
print(f"{'who':<44}{'best s':>8}{'median s':>10}{'peak RSS MiB':>14}  vs")
rt = {"tessera": "tessera rechunk (v3, --max-mem 256MiB)", "dask": "dask rechunk().to_zarr() (v2)",
      "dask-sync": "dask, then os.sync() (durable, as tessera)"}
t = find("tessera", "roundtrip")
for who, label in rt.items():
    r = find(who, "roundtrip")
    if r is None:
        continue
    vs = "" if who == "tessera" else f"tessera is {r['best'] / t['best']:.1f}x faster"
    print(f"{label:<44}{r['best']:8.3f}{r['median']:10.3f}{r['rss']:>14}  {vs}")
rt_sums = {v for (who, case), v in sums.items() if case == "roundtrip"}
print("both outputs hold the same values (sums agree)" if len(rt_sums) == 1 and read_sums == rt_sums
      else f"ROUND TRIP SUMS DIFFER: {sorted(rt_sums)} vs {sorted(read_sums)}")
PY
