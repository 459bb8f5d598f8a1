#!/usr/bin/env bash
# The HTML report's size and the time headless Chromium takes to open and draw it
# (from navigation to the end of the first drawing, by the page's own clock), for
# the four runs tests/diagnostics/report_browser.py checks; the 200,000-task
# report is held to 20 MB and 2 s (exit 1 past 2 s, best of 3).
#   scripts/bench report
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d build/meson-private ] || meson setup build >/dev/null
ninja -C build tools/tessera >/dev/null
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
/usr/bin/python3 tests/diagnostics/report_browser.py --tool build/tools/tessera --source-root . --out "$out" \
  --print-times | tee "$out/table"
best=$(sed -n 's/^| 200k | [0-9]* | [0-9.]* MB | \([0-9]*\) ms.*/\1/p' "$out/table")
echo "200k-task report: opened and drawn in $best ms (target <= 2000 ms)"
[ "$best" -le 2000 ]
