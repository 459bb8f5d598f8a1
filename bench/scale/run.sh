#!/usr/bin/env bash
# ns per edge of build, compile, cull, order, Plan and run on a 10^6-wide fan-in
# and a 10^6-long alias chain: linear steps show the same figure at every size.
# Pass --fan-in N / --chain N to change the sizes (0 skips a shape).
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build
ninja -C build -j2 bench/bench_scale >/dev/null
exec build/bench/bench_scale "$@"
