#!/usr/bin/env bash
# `tessera graph run` under mpirun at 2 and 4 ranks, beside the one-process run of the same file:
# - the same tasks (the sum of the ranks' rows) and the same outputs, held on rank 0 with their bytes;
#   rank 0 alone prints, with a row per rank and their sum (messages sent = messages received);
# - --profile: rank 0 writes one Chrome trace, a process per rank named "rank N", every task of the
#   one-process trace exactly once across the ranks;
# - a task that fails: the one-process error naming the rank, on every rank, exit status 1;
#   a file that cannot be read: exit status 2, each rank's error naming the rank; --report: refused;
# - --memory-limit, each rank's: a run that spills, and a limit refused before the run on every rank.
# Usage: graph_command.sh MPIRUN TESSERA SOURCE_ROOT
set -euo pipefail
mpirun=$1
tessera=$2
graphs=$3/tests/data/graphs
python=/usr/bin/python3
work=$(mktemp -d "${TMPDIR:-/tmp}/tessera-mpi-graph-XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
fail() { echo "FAIL: $*" >&2; exit 1; }
ranks() { timeout 120 "$mpirun" -n "$1" --oversubscribe "$tessera" "${@:2}"; }

# What both runs must print alike: "NAME: N tasks" and the outputs line.
same_part() { sed -n -e 's/^\([^ ]*: [0-9]* tasks\) on .*/\1/p' -e '/^  outputs /p' "$1"; }

for name in tree_sum tsqr cumsum rechunk_rows_to_cols map_overlap; do
  "$tessera" graph run --workers 1 --profile "one-$name.json" "$graphs/$name.json" >"one-$name.txt"
  for n in 2 4; do
    out="$name-$n.txt"
    ranks "$n" graph run --profile "trace-$name-$n.json" "$graphs/$name.json" >"$out" 2>"err-$out" ||
      { cat "err-$out" >&2; fail "$name on $n ranks exited with $?"; }
    diff <(same_part "one-$name.txt") <(same_part "$out") || fail "$name on $n ranks: other tasks or outputs than one process"
    [ "$(grep -c ' tasks on ' "$out")" -eq 1 ] || fail "$name on $n ranks: expected rank 0 alone to print"
    grep -q " tasks on $n ranks x " "$out" || fail "$name on $n ranks: the first line does not say $n ranks"
    $python - "$n" "$out" "one-$name.json" "trace-$name-$n.json" <<'PY' || fail "$name on $n ranks: see above"
import json, sys
from collections import Counter
n, out, one, across = int(sys.argv[1]), sys.argv[2], sys.argv[3], sys.argv[4]
lines = open(out).read().splitlines()
total = int(lines[0].split(": ")[1].split()[0])
rows = {l.split()[0]: [float(x) for x in l.split()[1:]] for l in lines[2:2 + n + 1]}
assert list(rows) == [str(r) for r in range(n)] + ["sum"], f"rows {list(rows)}"
for k in range(7):
    assert abs(sum(rows[str(r)][k] for r in range(n)) - rows["sum"][k]) < 1e-3 * n, f"column {k} is not the sum"
assert rows["sum"][0] == total, f"the ranks ran {rows['sum'][0]} tasks, expected {total}"
assert rows["sum"][1] == rows["sum"][3] and rows["sum"][2] == rows["sum"][4], "sent != received"
assert rows["sum"][1] > 0, "no result travelled between the ranks"
events = json.load(open(across))["traceEvents"]
names = {e["pid"]: e["args"]["name"] for e in events if e["ph"] == "M" and e["name"] == "process_name"}
assert names == {r: f"rank {r}" for r in range(n)}, f"process names {names}"
tasks = Counter(e["name"] for e in events if e["ph"] == "X")
pids = {e["pid"] for e in events if e["ph"] == "X"}
assert pids <= set(range(n)) and len(pids) > 1, f"task pids {pids}"
alone = Counter(e["name"] for e in json.load(open(one))["traceEvents"] if e["ph"] == "X")
assert tasks == alone, f"{sum((tasks - alone).values())} extra, {sum((alone - tasks).values())} missing tasks"
assert max(tasks.values()) == 1
PY
  done
done

# A task that fails: ('y', 5) asks for more bytes than can be allocated.
$python - <<'PY'
import json
tasks = [{"key": ["x", i], "deps": [], "func": "make", "nbytes": 8} for i in range(8)]
tasks += [{"key": ["y", i], "deps": [["x", i]], "func": "f", "nbytes": 18446744073709551615 if i == 5 else 8} for i in range(8)]
tasks.append({"key": "total", "deps": [["y", i] for i in range(8)], "func": "sum", "nbytes": 8})
json.dump({"format": "tessera-graph/1", "name": "fails", "tasks": tasks, "outputs": ["total"]}, open("fails.json", "w"))
PY
status=0
"$tessera" graph run fails.json >/dev/null 2>one-err.txt || status=$?
[ "$status" -eq 1 ] || fail "one process: expected exit status 1 for a failed task, found $status"
for n in 2 4; do
  status=0
  ranks "$n" graph run fails.json >out.txt 2>err.txt || status=$?
  [ "$status" -eq 1 ] || { cat err.txt >&2; fail "$n ranks: expected exit status 1 for a failed task, found $status"; }
  grep '^tessera: ' err.txt | sort -u >said.txt
  [ "$(grep -c '^tessera: ' err.txt)" -eq "$n" ] || { cat err.txt >&2; fail "$n ranks: expected the error on every rank"; }
  [ "$(wc -l <said.txt)" -eq 1 ] || { cat said.txt >&2; fail "$n ranks: the ranks told different errors"; }
  grep -Eq "failed: on rank [0-$((n - 1))]: " said.txt || { cat said.txt >&2; fail "$n ranks: the error names no rank"; }
  diff one-err.txt <(sed -E 's/failed: on rank [0-9]+: /failed: /' said.txt) ||
    fail "$n ranks: another error than one process's (above: one process, then the ranks')"
  [ ! -s out.txt ] || fail "$n ranks: a failed run printed figures"
done

# A file that cannot be read: exit status 2, as one process; every rank names itself.
status=0
ranks 2 graph run no-such.json >/dev/null 2>err.txt || status=$?
[ "$status" -eq 2 ] || { cat err.txt >&2; fail "a missing file: expected exit status 2, found $status"; }
for r in 0 1; do
  grep -q "^tessera: rank $r of 2: no-such.json: " err.txt || { cat err.txt >&2; fail "a missing file: rank $r does not say it"; }
done
# --memory-limit is each rank's: a run that spills gives the one-process tasks and outputs; a limit no task
# fits is refused before the run on every rank, naming the rank, exit status 1 as one process.
"$tessera" graph run --memory-limit 60KiB "$graphs/map_overlap.json" >one-limit.txt
ranks 2 graph run --memory-limit 60KiB "$graphs/map_overlap.json" >limit.txt 2>err.txt || { cat err.txt >&2; fail "a run with a limit failed"; }
diff <(same_part one-limit.txt) <(same_part limit.txt) || fail "a run with a limit: other tasks or outputs than one process"
grep -q '^  memory limit          61440 (each rank)$' limit.txt || fail "a run with a limit does not print it"
grep -Eq '^  bytes spilled         [1-9][0-9]* \([0-9]+ results, [0-9.]+ s, all ranks\)$' limit.txt ||
  { cat limit.txt >&2; fail "a run with a limit spilled nothing (or does not say so)"; }
status=0
"$tessera" graph run --memory-limit 2KiB "$graphs/map_overlap.json" >/dev/null 2>one-err.txt || status=$?
[ "$status" -eq 1 ] || fail "one process: expected exit status 1 for a limit no task fits, found $status"
status=0
ranks 2 graph run --memory-limit 2KiB "$graphs/map_overlap.json" >/dev/null 2>err.txt || status=$?
[ "$status" -eq 1 ] || { cat err.txt >&2; fail "a limit no task fits: expected exit status 1, found $status"; }
for r in 0 1; do
  grep -qxF "tessera: rank $r of 2: $(sed 's/^tessera: //' one-err.txt)" err.txt ||
    { cat one-err.txt err.txt >&2; fail "a limit no task fits: rank $r does not tell the one-process error"; }
done

# A trace rank 0 cannot write: its error and exit status 1, as one process; no rank waits for it.
status=0
ranks 2 graph run --profile no-such-dir/t.json "$graphs/tree_sum.json" >/dev/null 2>err.txt || status=$?
[ "$status" -eq 1 ] || { cat err.txt >&2; fail "an unwritable trace: expected exit status 1, found $status"; }
grep -qxF "tessera: no-such-dir/t.json: cannot open for writing: No such file or directory" err.txt ||
  { cat err.txt >&2; fail "an unwritable trace: not told"; }

# --report draws one process: refused across ranks as bad usage (exit status 2), pointing to --profile.
status=0
ranks 2 graph run --report r.html "$graphs/tree_sum.json" >/dev/null 2>err.txt || status=$?
[ "$status" -eq 2 ] || { cat err.txt >&2; fail "--report across ranks: expected exit status 2, found $status"; }
grep -q -- "--report draws a run on one process; it cannot be used under mpirun or with --mpi" err.txt ||
  { cat err.txt >&2; fail "--report across ranks: not refused as expected"; }
[ ! -e r.html ] || fail "--report across ranks wrote a report"

# Options given to one rank only (mpirun's A : B form): refused on every rank, naming what each was given.
status=0
timeout 120 "$mpirun" --oversubscribe -n 1 "$tessera" graph run --workers 1 --memory-limit 1GiB "$graphs/tree_sum.json" : \
  -n 1 "$tessera" graph run --workers 2 "$graphs/tree_sum.json" >out.txt 2>err.txt || status=$?
[ "$status" -eq 2 ] || { cat err.txt >&2; fail "options given to one rank: expected exit status 2, found $status"; }
[ "$(grep -c -- "expected every rank to be given the same options, found rank 0 given '--workers 1 --memory-limit 1GiB'; rank 1 was given '--workers 2 --memory-limit none'" err.txt)" -eq 2 ] ||
  { cat err.txt >&2; fail "options given to one rank: not refused on both ranks"; }
[ ! -s out.txt ] || fail "options given to one rank: the run ran"

echo "ok: graph run across 2 and 4 ranks ran the one-process tasks and outputs, one trace with a process per rank; errors as one process's, naming the rank"
