#!/usr/bin/env bash
# Memory of a long-running process: RSS after 10^5 and 10^6 small arrays built
# and computed one after another, and their ratio (bounded: within 10%); then
# what a Key costs to copy and find, the price of counting interned names.
set -euo pipefail
cd "$(dirname "$0")/../.."
. bench/build.sh
bench_build
ninja -C build -j2 bench/bench_leak bench/bench_key_copy >/dev/null
build/bench/bench_leak "$@"
build/bench/bench_key_copy
