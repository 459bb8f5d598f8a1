#!/usr/bin/env bash
# The FFT demo across 2 ranks of mpirun on a small image: it finds the planted frequencies
# (exit status 0, "-> match"), only rank 0 prints, and the work folder it made is gone.
# Usage: demo_command.sh MPIRUN DEMO
set -euo pipefail
mpirun=$1
demo=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-mpi-demo-XXXXXX")
trap 'rm -rf "$work"' EXIT
status=0
timeout 120 "$mpirun" -n 2 --oversubscribe "$demo" --size 64MiB --workers 1 --dir "$work" \
  >"$work/out.txt" 2>"$work/err.txt" || status=$?
cat "$work/out.txt"
[ "$status" -eq 0 ] || { echo "FAIL: exit status $status" >&2; cat "$work/err.txt" >&2; exit 1; }
grep -q -- '-> match' "$work/out.txt" || { echo "FAIL: the planted frequencies were not found" >&2; exit 1; }
[ "$(grep -c '^image .* float32' "$work/out.txt")" -eq 1 ] || { echo "FAIL: expected one report, from rank 0" >&2; exit 1; }
grep -q 'on each of 2 ranks' "$work/out.txt" || { echo "FAIL: the demo did not run across the ranks" >&2; exit 1; }
grep -q 'peak RSS per rank' "$work/out.txt" || { echo "FAIL: no peak RSS per rank" >&2; exit 1; }
left=$(find "$work" -mindepth 1 -maxdepth 1 -name 'tessera-demo-*' | wc -l)
[ "$left" -eq 0 ] || { echo "FAIL: the demo left its work folder" >&2; exit 1; }
echo "ok: the demo across 2 ranks found the planted frequencies"
