"""Writes a tessera-graph/1 file of a binary-tree sum over LEAVES tiny tasks.

The tasks are what `da.ones(LEAVES, chunks=1).sum(split_every=2)` makes in
shape (one task per leaf, then pairwise sums), with 8-byte results; the file is
the input of `scripts/bench graphs`' whole-process timing of `tessera graph run`.

usage: tree_graph.py LEAVES OUT.json
"""
import json
import sys


def main():
    leaves, out = int(sys.argv[1]), sys.argv[2]
    tasks = [{"key": ["leaf", i], "deps": [], "func": "inc", "nbytes": 8} for i in range(leaves)]
    level, width = 0, leaves
    below = [["leaf", i] for i in range(leaves)]
    while width > 1:
        level += 1
        above = []
        for j in range(0, width, 2):
            key = ["sum", level, j // 2]
            deps = below[j:j + 2]
            tasks.append({"key": key, "deps": deps, "func": "add" if len(deps) == 2 else "inc", "nbytes": 8})
            above.append(key)
        below, width = above, len(above)
    doc = {"format": "tessera-graph/1", "name": "tree_%d" % leaves,
           "source": "binary-tree sum of %d tiny tasks" % leaves, "tasks": tasks, "outputs": [below[0]]}
    with open(out, "w") as f:
        json.dump(doc, f)


if __name__ == "__main__":
    sys.exit(main())
