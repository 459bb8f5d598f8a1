#!/usr/bin/env bash
# `scripts/bench mpi`: tessera's SPMD view on MPI ranks beside ipyparallel, 4 engines each.
#   - no-op apply round trip to 4 engines (tessera: mpirun -n 5, rank 0 the client;
#     ipyparallel: a controller and 4 engines on loopback, started by ipp.Cluster);
#   - the MD5 tutorial on a running cluster (scatter, apply, flatten; 500 files of 1 KiB);
#   - a cluster's start plus the tutorial: mpirun -n 5 spmd_md5_mpi, start to exit,
#     beside ipyparallel's cluster start plus the tutorial's median.
# Then bench/mpi/rechunk.sh, when present (the rechunk across ranks), and
# bench/mpi/graphs.sh (array workloads and a graph file across ranks beside
# dask.distributed). `scripts/bench mpi graphs [--size SIZE ...]` runs only that one.
# Each side is bounded by a timeout (PEER_TIMEOUT, 600 s); ipyparallel runs with
# /usr/bin/python3 (Debian's python3-ipyparallel). Open MPI runs as root when
# asked to (CI); --oversubscribe lets 5 ranks share fewer cores.
set -euo pipefail
cd "$(dirname "$0")/../.."
if [ "${1:-}" = graphs ]; then
  shift
  exec bench/mpi/graphs.sh "$@"
fi
engines=4
peer_timeout=${PEER_TIMEOUT:-600}
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1

. bench/build.sh
bench_build
ninja -C build -j2 bench/bench_spmd_mpi examples/spmd_md5_mpi >/dev/null

work=$(mktemp -d /tmp/tessera-mpi-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/files"
/usr/bin/python3 bench/peers/md5_files.py "$work/files"

mpirun_n() { timeout --kill-after=10 "$peer_timeout" mpirun -n $((engines + 1)) --oversubscribe "$@"; }

echo "== tessera on MPI ranks ($engines engines)" >&2
mpirun_n build/bench/bench_spmd_mpi "$work/files" | grep '^{' >"$work/tessera.json"
start=$(date +%s.%N)
mpirun_n build/examples/spmd_md5_mpi 500 "$work" >"$work/example.txt"
example_s=$(echo "$(date +%s.%N) - $start" | bc)
grep -q "equals the plain one" "$work/example.txt"

echo "== ipyparallel ($engines engines)" >&2
status=0
timeout --kill-after=60 "$peer_timeout" /usr/bin/python3 bench/peers/spmd_ipyparallel.py \
  --engines "$engines" --small 0 --repeats 200 --folder "$work/files" >"$work/peer.json" || status=$?
if [ "$status" -ne 0 ]; then
  echo "ipyparallel run failed (exit $status); its column is left empty" >&2
  : >"$work/peer.json"
fi

/usr/bin/python3 bench/mpi/table.py "$engines" "$work/tessera.json" "$work/peer.json" "$example_s"

if [ -x bench/mpi/rechunk.sh ]; then
  bench/mpi/rechunk.sh
fi
bench/mpi/graphs.sh
