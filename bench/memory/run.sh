#!/usr/bin/env bash
# Three workloads under a memory limit, side by side in one run (scripts/bench memory):
#   transpose  z = x + x.T, every block of z requested (float64, 8 x 8 blocks)
#   rechunk    row blocks to column blocks by the `tasks` method (all-to-all)
#   tree       a tree sum over 32 MiB blocks, every block requested besides the sum
# Each runs in a process of its own: tessera without a limit (its peak bytes
# held), tessera with LIMIT, and dask's threaded scheduler without one (its peak
# RSS). The check: the result is right and tessera's peak RSS under the limit
# is at most LIMIT + 10% + 64 MiB. Spilled results go to $TMPDIR (default /tmp).
#
# Usage: bench/memory/run.sh [BUILD_DIR=build] [LIMIT_MIB=128] [WORKERS=2] [SIZE=small|full]
# small (the default, a few minutes on a shared 2-core box): transpose 512 MiB,
# rechunk 648 MiB, tree 12 blocks = 384 MiB, so that each unbounded run holds at
# least 3x a 128 MiB limit. full: the sizes of the budget's acceptance figures,
# transpose 4 GiB in 64 MiB blocks, rechunk 2 GiB, tree 48 blocks = 1.5 GiB; run
# it with LIMIT_MIB=512 (dask needs several GiB of memory beside it).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
build=${1:-build}
limit_mib=${2:-128}
workers=${3:-2}
size=${4:-small}
case "$size" in
  small) specs="transpose:0.5 rechunk:0.75 tree:0.5" ;;
  full) specs="transpose:1.4143 rechunk:1.3334 tree:2" ;;
  *) echo "bench/memory/run.sh: SIZE is small or full, found '$size'" >&2; exit 2 ;;
esac
python=${TESSERA_PYTHON:-/usr/bin/python3}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" bench/bench_memory >/dev/null
limit=$((limit_mib * 1024 * 1024))
peer="$here/../peers/memory_dask.py"

field() { "$python" -c "import json,sys; print(json.loads(sys.argv[1])[sys.argv[2]])" "$1" "$2"; }
mib() { "$python" -c "print(f'{$1 / 2**20:,.0f}')"; }

echo "| workload | unbounded: bytes held at most (tessera) | / limit | tessera peak RSS, limit $limit_mib MiB | bound (limit + 10% + 64 MiB) | spilled MiB | reloads | tessera peak RSS, no limit | dask peak RSS, no limit | correct |"
echo "|---|---|---|---|---|---|---|---|---|---|"
for spec in $specs; do
  w=${spec%%:*}
  scale=${spec##*:}
  free=$("$build/bench/bench_memory" "$w" --scale "$scale" --workers "$workers")
  limited=$("$build/bench/bench_memory" "$w" --scale "$scale" --workers "$workers" --limit "$limit")
  dask=$("$python" "$peer" "$w" "$scale" "$workers")
  held=$(field "$free" peak_held_bytes)
  rss=$(field "$limited" peak_rss)
  bound=$((limit + limit / 10 + 64 * 1024 * 1024))
  ratio=$("$python" -c "print(f'{$held / $limit:.1f}x')")
  ok=$([ "$rss" -le "$bound" ] && echo "within" || echo "OVER")
  correct="tessera $(field "$limited" correct)/$(field "$free" correct), dask $(field "$dask" correct)"
  echo "| $w | $(mib "$held") MiB | $ratio | $(mib "$rss") MiB ($ok) | $(mib "$bound") MiB | $(mib "$(field "$limited" spilled_bytes)") | $(field "$limited" reloads) | $(mib "$(field "$free" peak_rss)") MiB | $(mib "$(field "$dask" peak_rss)") MiB | $correct |"
done
