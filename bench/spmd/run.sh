#!/usr/bin/env bash
# `scripts/bench spmd`: tessera::spmd against ipyparallel's BroadcastView, side by side.
#   no-op apply latency to 8 and to 100 engines (mean, and the median of single
#   calls beside a plain thread's wake-up round trip), and the MD5 tutorial end to end
#   (500 files of 1 KiB, 100 engines) on a running cluster.
# Both sides hash the same files. ipyparallel runs with /usr/bin/python3 (Debian's
# python3-ipyparallel), its controller and engines on loopback, bounded by a timeout;
# the peer stops its cluster on every exit path.
# Environment: SPMD_BENCH_ENGINES (100), PEER_TIMEOUT seconds (900; then SIGTERM, on which the
# peer stops its engines, which takes up to ~3 min for 100; SIGKILL 300 s later).
set -euo pipefail
cd "$(dirname "$0")/../.."
engines=${SPMD_BENCH_ENGINES:-100}
peer_timeout=${PEER_TIMEOUT:-900}

. bench/build.sh
bench_build
ninja -C build -j2 bench/spmd_bench >/dev/null

work=$(mktemp -d /tmp/tessera-spmd-bench-XXXXXX)
trap 'rm -rf "$work"' EXIT
mkdir "$work/files"
/usr/bin/python3 bench/peers/md5_files.py "$work/files"

# tessera runs before and after the (long) peer run, so that both sides sample the
# machine's load over the same stretch of time; the table takes medians.
run_tessera() {  # run_tessera OUT.json
  TESSERA_BENCH_MD5_FOLDER="$work/files" build/bench/spmd_bench \
    --benchmark_filter="BM_noop_apply/(8|$engines)/|BM_noop_apply_each/$engines/|BM_wake_round_trip|BM_md5_end_to_end/$engines/|BM_md5_plain_loop" \
    --benchmark_min_time=0.2 --benchmark_repetitions=5 \
    --benchmark_out="$1" --benchmark_out_format=json >&2
}
echo "== tessera (1 of 2)" >&2
run_tessera "$work/tessera1.json"

echo "== ipyparallel ($engines engines; starting them takes a while)" >&2
status=0
timeout --kill-after=300 "$peer_timeout" /usr/bin/python3 bench/peers/spmd_ipyparallel.py \
  --engines "$engines" --small 8 --folder "$work/files" >"$work/peer.json" || status=$?
if [ "$status" -ne 0 ]; then
  echo "ipyparallel run failed (exit $status); its column is left empty" >&2
  : >"$work/peer.json"
fi

echo "== tessera (2 of 2)" >&2
run_tessera "$work/tessera2.json"

/usr/bin/python3 bench/spmd/table.py "$engines" "$work/peer.json" "$work/tessera1.json" "$work/tessera2.json"
