#!/usr/bin/env python3
"""Widths of `tessera graph dot FILE | dot -Tsvg` for graph files, in pt and in px
at Graphviz's 96 dpi bitmap resolution; with --check, fails when one of them is
wider than 4,000 px. By default the 8 hand-picked graphs of tests/data/graphs
(the first ones exported); --all: every file there.

usage: dot_widths.py TESSERA SOURCE_ROOT [--all] [--check] [-- DOT_ARGS...]
Exit 77 (skipped) without Graphviz's dot, unless CI=true."""
import os
import re
import shutil
import subprocess
import sys

HAND_PICKED = ["cumsum", "map_overlap", "matmul", "normalize", "rechunk_rows_to_cols", "tree_sum", "tsqr", "x_plus_xT"]
MAX_PX = 4000


def main():
    args = sys.argv[1:]
    extra = args[args.index("--") + 1:] if "--" in args else []
    args = args[:args.index("--")] if "--" in args else args
    tool, root = args[0], args[1]
    dot = shutil.which("dot")
    if not dot:
        print("Graphviz's dot not found")
        sys.exit(1 if os.environ.get("CI") == "true" else 77)
    folder = os.path.join(root, "tests", "data", "graphs")
    names = sorted(f[:-5] for f in os.listdir(folder) if f.endswith(".json")) if "--all" in args else HAND_PICKED
    too_wide = []
    print("| graph | nodes drawn | width pt | width px (96 dpi) | height pt |")
    print("|---|---|---|---|---|")
    for name in names:
        text = subprocess.run([tool, "graph", "dot", os.path.join(folder, name + ".json")] + extra,
                              capture_output=True, text=True, check=True).stdout
        svg = subprocess.run([dot, "-Tsvg"], input=text, capture_output=True, text=True, check=True, timeout=600).stdout
        w, h = (float(v) for v in re.search(r'<svg width="([0-9.]+)pt" height="([0-9.]+)pt"', svg).groups())
        tasks = len(re.findall(r"^\s+[ns]\d+ \[label=", text, re.M))
        px = w * 96 / 72
        print(f"| {name} | {tasks} | {w:.0f} | {px:.0f} | {h:.0f} |")
        if px > MAX_PX:
            too_wide.append(name)
    if "--check" in args and too_wide:
        print(f"wider than {MAX_PX} px: {', '.join(too_wide)}")
        sys.exit(1)


if __name__ == "__main__":
    main()
