#!/usr/bin/env bash
# Per-task overhead: tessera get vs oneTBB flow_graph vs dask.threaded.get.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build
ninja -C build -j2 bench/bench_overhead >/dev/null
exec build/bench/bench_overhead --peer-script bench/peers/overhead_dask.py --python /usr/bin/python3 "$@"
