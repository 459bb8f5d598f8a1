#!/usr/bin/env bash
# Build, cull and order time per task at 1e4, 1e5 and 1e6 tasks, beside dask's
# (bench/peers/order_peer.py) on the same graph.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build
ninja -C build bench/bench_optimize >/dev/null
exec build/bench/bench_optimize "$@"
