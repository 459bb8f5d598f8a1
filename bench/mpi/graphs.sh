#!/usr/bin/env bash
# Graphs across MPI ranks beside dask.distributed, one run, the same data on disk:
#  - tessera: `mpirun -n RANKS --oversubscribe bench_graphs_mpi WORKLOAD ...`, one
#    worker per rank (Array::compute / get with GetOptions::communicator);
#  - dask: LocalCluster(n_workers=RANKS, threads_per_worker=1) of Debian's
#    python3-distributed under /usr/bin/python3 (bench/peers/graphs_distributed.py),
#    a fresh cluster per workload so that each peak RSS is that workload's.
# Workloads (SIZE 2GiB gives the issue's sizes; bench/peers/graphs_distributed.py
# `shapes SIZE` prints them):
#  - the 2-D FFT of a SIZE float32 image (zarr, blosc lz4): rfft along rows,
#    rechunk (tasks method on both sides, intermediate blocks up to 4 row blocks:
#    128 MiB at 2GiB, dask's default) to whole columns, fft down them, then sum(|F|^2);
#  - (x - x.mean(0)) / x.std(0) on a SIZE float64 zarr, stored to zarr (blosc
#    lz4, the inputs' codec; tessera: ta::store across the ranks, dask: to_zarr);
#    each side's check value is sum(z^2) read back from its own store;
#  - x @ x.T on an 8192^2 float64 zarr in blocks of 1024^2 (scaled with SIZE),
#    then the sum;
#  - a tree-sum graph file of tiny tasks (bench/graphs/tree_graph.py; 200,000
#    tasks at 2GiB) beside dask: µs per task and results sent between ranks per task;
#  - the scheduling cost across ranks: tessera alone on a 200,000-task tree
#    (--scale-leaves) at 1, 2 and RANKS ranks.
# The FFT and matmul end in a sum computed across the ranks (checked against
# dask's); standardize ends in its store, and the sums read back from the two
# stores are compared. Times are from a barrier before the graph is built to the
# value on rank 0, or to the store published (dask: graph built and computed on
# a running cluster; the read-back sum is not timed). The table also gives
# CPU seconds (all ranks; dask: workers plus the scheduler's process) because
# with RANKS above the cores the ranks share cores and wall time follows load.
#
# Usage: bench/mpi/graphs.sh [--size SIZE] [--ranks RANKS] [--leaves N] [--scale-leaves N] [--max-mem BYTES] [--only LIST] [BUILD_DIR=build]
#   (scripts/bench mpi graphs ...). SIZE=2GiB is the issue's (several minutes on
#   2 cores); 256MiB took 3.5 minutes on the loaded 2-core VM. --leaves: the graph file's leaves
#   (default 100,000 x SIZE / 2GiB: dask.distributed takes milliseconds per task
#   on a loaded 2-core machine); --scale-leaves: the leaves of tessera's own
#   1, 2, RANKS rank runs (default 100,000: 200,000 tasks). --max-mem: each rank's memory_limit in bytes
#   (default none; dask's workers keep their default limits). --only: the rows to run, a
#   comma-separated subset of fft,standardize,matmul,graph,scale (default all; graph is the
#   side-by-side tree file, scale tessera's 1, 2, RANKS runs). The data goes to $TMPDIR (3 x SIZE,
#   the two standardize stores and a little), removed at the end. PEER_TIMEOUT (default 900 s) bounds each run.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
size=2GiB ranks=4 build=build leaves= scale_leaves=100000 max_mem=() only=fft,standardize,matmul,graph,scale
while [ $# -gt 0 ]; do
  case $1 in
    --size) size=$2; shift 2 ;;
    --ranks) ranks=$2; shift 2 ;;
    --leaves) leaves=$2; shift 2 ;;
    --scale-leaves) scale_leaves=$2; shift 2 ;;
    --max-mem) max_mem=(--max-mem "$2"); shift 2 ;;
    --only) only=$2; shift 2 ;;
    -h|--help) sed -n '2,/^set -e/{/^set -e/d; s/^# \{0,1\}//; p}' "$0"; exit 0 ;;
    *) build=$1; shift ;;
  esac
done
for w in ${only//,/ }; do
  case $w in fft|standardize|matmul|graph|scale) ;; *) echo "--only: expected rows among fft,standardize,matmul,graph,scale, found '$w'" >&2; exit 2 ;; esac
done
wanted() { [[ ",$only," == *",$1,"* ]]; }
python=/usr/bin/python3
peer="$root/bench/peers/graphs_distributed.py"
limit=${PEER_TIMEOUT:-900}
[[ "$build" = /* ]] || build="$root/$build"
. "$root/bench/build.sh"
bench_build "$build"
ninja -C "$build" -j2 bench/bench_graphs_mpi >/dev/null
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

bytes=$("$python" -c "import re,sys; m=re.fullmatch(r'(\d+)([KMG]i?B)?', sys.argv[1]) or sys.exit('--size: expected a size such as 2GiB or 256MiB, found ' + repr(sys.argv[1][:40])); print(int(m[1]) * {None:1,'KiB':2**10,'MiB':2**20,'GiB':2**30,'KB':10**3,'MB':10**6,'GB':10**9}[m[2]])" "$size")
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-bench-mpi-graphs-XXXXXX")
trap 'rm -rf "$work"' EXIT
"$python" "$peer" shapes "$bytes" >"$work/shapes.json"
columns=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['fft_columns'])" "$work/shapes.json")
rechunk_limit=$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['rechunk_limit'])" "$work/shapes.json")
leaves=${leaves:-$("$python" -c "import json,sys; print(json.load(open(sys.argv[1]))['leaves'])" "$work/shapes.json")}
echo "== writing the inputs ($size) to $work" >&2
"$python" "$peer" make "$work" "$bytes"
"$python" "$root/bench/graphs/tree_graph.py" "$leaves" "$work/tree.json"
"$python" "$root/bench/graphs/tree_graph.py" "$scale_leaves" "$work/tree-scale.json"

results=$work/results.jsonl
tessera() {  # RANKS WORKLOAD ARGS... (WHO=tessera-scale: a run of tessera alone)
  local n=$1; shift
  echo "== tessera, $n ranks: $*" >&2
  (cd "$work" && timeout --kill-after=10 "$limit" mpirun -n "$n" --oversubscribe "$build/bench/bench_graphs_mpi" "$@" "${max_mem[@]}") |
    grep '^{' | sed "s/^{/{\"who\": \"${WHO:-tessera}\", /" >>"$results"
}
dask() {  # WORKLOAD ARGS...
  echo "== dask.distributed, $ranks workers: $*" >&2
  (cd "$work" && timeout --kill-after=30 "$limit" "$python" "$peer" run "$ranks" "$@" 2>"$work/dask.log") |
    grep '^{' | sed "s/^{/{\"who\": \"dask\", /" >>"$results" || { tail -20 "$work/dask.log" >&2; exit 1; }
}
sync
if wanted fft; then
  tessera "$ranks" fft image.zarr "$columns" "$rechunk_limit"
  dask fft image.zarr "$columns" "$rechunk_limit"
fi
if wanted standardize; then
  tessera "$ranks" standardize x.zarr z-tessera.zarr
  dask standardize x.zarr z-dask.zarr
fi
if wanted matmul; then
  tessera "$ranks" matmul m.zarr
  dask matmul m.zarr
fi
if wanted scale; then
  for n in $(printf '%s\n' 1 2 "$ranks" | sort -nu); do WHO=tessera-scale tessera "$n" graph tree-scale.json; done
fi
if wanted graph; then
  tessera "$ranks" graph tree.json
  dask graph tree.json
fi
"$python" "$here/graphs_table.py" "$results" "$work/shapes.json" "$size" "$ranks"
