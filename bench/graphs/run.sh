#!/usr/bin/env bash
# Memory held on dask's own graphs: `tessera graph inspect --json` on every file in
# tests/data/graphs (exported from dask 2022.12 with dask's figures), as one table.
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d build/meson-private ] || meson setup build >/dev/null
ninja -C build tools/tessera >/dev/null
for f in tests/data/graphs/*.json; do build/tools/tessera graph inspect "$f" --json; done |
  /usr/bin/python3 -c '
import json, sys
rows = [json.loads(s) for s in sys.stdin.read().replace("}\n{", "}\0{").split("\0")]
cols = ["sync_max_held", "sync_max_held_bytes", "order_max_pressure"]
print("| graph | tasks | " + " | ".join(f"{c} dask | tessera" for c in cols) + " |")
print("|---" * (2 + 2 * len(cols)) + "|")
total = {c: [0, 0] for c in cols}
for r in rows:
    cells = []
    for c in cols:
        d, t = r["dask"][c], r[c]
        total[c][0] += d; total[c][1] += t
        cells += [str(d), str(t)]
    print("| %s | %d | " % (r["name"], r["tasks"]) + " | ".join(cells) + " |")
print("| **sum** | | " + " | ".join(f"{d} | {t} ({t / d:.0%})" for d, t in total.values()) + " |")
'
