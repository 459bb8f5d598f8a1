#!/usr/bin/env bash
# Instructions per phase of bench_overhead, two checkouts side by side, under
# callgrind: deterministic where wall time on a shared machine swings by more
# than the differences it is asked to show.
#
#   bench/overhead/phases.sh BEFORE [AFTER]
#
# BEFORE and AFTER (default: this checkout) are source folders, each with a
# release build in BEFORE/build (lib/libtessera.so built). Both are measured
# with this checkout's bench/overhead/phases.cpp, each against its own headers,
# library and bench/overhead/dags.cpp (bench/overhead_dags.cpp in a checkout from
# before bench/overhead/ held the programs). PHASES and DAGS (environment) choose the
# rows (default: build plan run1 lim1 e2e1; tree_sum chains stencil). Prints a
# markdown table: instructions (Ir), simulated D1 and last-level cache misses,
# and mispredicted branches of callgrind's simple predictor (an address-indexed
# table: a move of the code changes it, read it as a hint only). The callgrind
# files stay in the folder it names, for `callgrind_annotate FILE` per function.
set -euo pipefail
here=$(cd "$(dirname "$0")/../.." && pwd)
before=$(cd "${1:?usage: phases.sh BEFORE [AFTER]}" && pwd)
after=$(cd "${2:-$here}" && pwd)
phases=${PHASES:-build plan run1 lim1 e2e1}
dags=${DAGS:-tree_sum chains stencil}
command -v valgrind >/dev/null || { echo "phases.sh: needs valgrind (scripts/setup installs it)" >&2; exit 1; }
out=$(mktemp -d "${TMPDIR:-/tmp}/overhead-phases.XXXXXX")
for side in before after; do
  root=${!side}
  [ -e "$root/build/lib/libtessera.so" ] || { echo "phases.sh: no $root/build/lib/libtessera.so (build it first)" >&2; exit 1; }
  dags_src=$root/bench/overhead/dags.cpp
  [ -e "$dags_src" ] || dags_src=$root/bench/overhead_dags.cpp  # a checkout from before the move
  # The flags of bench_overhead in a release build.
  c++ -std=c++20 -O3 -DNDEBUG -D_FILE_OFFSET_BITS=64 -pthread -I"$root/bench" -I"$root/include" \
    $(pkg-config --cflags eigen3) "$here/bench/overhead/phases.cpp" "$dags_src" \
    -o "$out/$side" -L"$root/build/lib" -Wl,-rpath,"$root/build/lib" -ltessera \
    $(pkg-config --libs tbb absl_hash absl_raw_hash_set)
done
for dag in $dags; do
  for phase in $phases; do
    for side in before after; do
      valgrind --tool=callgrind --instr-atstart=no --cache-sim=yes --branch-sim=yes \
        --callgrind-out-file="$out/$side-$phase-$dag" "$out/$side" "$phase" "$dag" >/dev/null 2>"$out/$side-$phase-$dag.log" ||
        { cat "$out/$side-$phase-$dag.log" >&2; exit 1; }
    done
  done
done
echo "callgrind files: $out ($(cd "$before" && git describe --always --dirty 2>/dev/null || echo "$before") -> $(cd "$after" && git describe --always --dirty 2>/dev/null || echo "$after"))"
/usr/bin/python3 - "$out" $dags -- $phases <<'PY'
import sys
out = sys.argv[1]; i = sys.argv.index('--'); dags = sys.argv[2:i]; phases = sys.argv[i + 1:]
def totals(f):
    ev = tot = None
    for line in open(f):
        if line.startswith('events:'): ev = line.split()[1:]
        if line.startswith('totals:'): tot = [int(x) for x in line.split()[1:]]
    return dict(zip(ev, tot))
def change(a, b): return f"{100 * (b / a - 1):+.1f}%" if a else "-"
print("| phase | DAG | Ir before | Ir after | Ir | D1 misses | LL misses | mispredicts |")
print("|---|---|---:|---:|---:|---:|---:|---:|")
for dag in dags:
    for phase in phases:
        b = totals(f"{out}/before-{phase}-{dag}"); a = totals(f"{out}/after-{phase}-{dag}")
        s = lambda r, ks: sum(r[k] for k in ks)
        print(f"| {phase} | {dag} | {b['Ir']:,} | {a['Ir']:,} | {change(b['Ir'], a['Ir'])} | "
              f"{change(s(b, ['D1mr', 'D1mw']), s(a, ['D1mr', 'D1mw']))} | "
              f"{change(s(b, ['DLmr', 'DLmw']), s(a, ['DLmr', 'DLmw']))} | "
              f"{change(s(b, ['Bcm', 'Bim']), s(a, ['Bcm', 'Bim']))} |")
PY
