#!/usr/bin/env bash
# `tessera rechunk` under mpirun at 2 and 4 ranks: the store it writes is the single-process command's,
# byte for byte, and a refused target is an error on every rank (exit status 1, naming rank 0), with the
# target left as it was; a missing source is exit status 2 with each rank's error naming it.
# Usage: rechunk_command.sh MPIRUN TESSERA
set -euo pipefail
mpirun=$1
tessera=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-mpi-command-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
/usr/bin/python3 -c "import numpy as np; np.save('a.npy', np.random.default_rng(3).random((96, 72)))"
"$tessera" rechunk a.npy src.zarr --chunks 8,-1 --no-progress 2>/dev/null
"$tessera" rechunk src.zarr ref.zarr --chunks -1,8 --no-progress 2>/dev/null
for n in 2 4; do
  timeout 120 "$mpirun" -n "$n" --oversubscribe "$tessera" rechunk src.zarr "out$n.zarr" --chunks -1,8 \
    --max-mem 96KiB 2>"err$n.txt" || { cat "err$n.txt" >&2; exit 1; }
  diff -r ref.zarr "out$n.zarr" || { echo "FAIL: $n ranks wrote another store than one process" >&2; exit 1; }
done
echo "not a store" >taken
status=0
timeout 120 "$mpirun" -n 2 --oversubscribe "$tessera" rechunk src.zarr taken --chunks -1,8 --overwrite \
  2>err.txt || status=$?
[ "$status" -eq 1 ] || { echo "FAIL: expected exit status 1 for a refused target, found $status" >&2; exit 1; }
[ "$(grep -c 'tessera: rank 0 of 2: taken: will not replace it' err.txt)" -eq 2 ] ||
  { echo "FAIL: expected the error on both ranks:" >&2; cat err.txt >&2; exit 1; }
[ "$(cat taken)" = "not a store" ] || { echo "FAIL: the refused target changed" >&2; exit 1; }
# A source that cannot be opened: exit status 2 as one process, every rank telling its error by its rank.
status=0
timeout 120 "$mpirun" -n 2 --oversubscribe "$tessera" rechunk no-such.npy out.zarr --chunks 8,-1 2>err.txt || status=$?
[ "$status" -eq 2 ] || { cat err.txt >&2; echo "FAIL: expected exit status 2 for a missing source, found $status" >&2; exit 1; }
for r in 0 1; do
  grep -qxF "tessera: rank $r of 2: no-such.npy: cannot open: No such file or directory" err.txt ||
    { cat err.txt >&2; echo "FAIL: rank $r does not tell the missing source by its rank" >&2; exit 1; }
done
echo "ok: 2 and 4 ranks wrote the single-process store; a refused target failed on every rank"
