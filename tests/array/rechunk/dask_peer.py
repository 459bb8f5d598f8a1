"""Answers rechunk planning questions with dask's own functions, for the tests.

Reads JSON from stdin: {"plans": [[old, new, itemsize, limit, threshold], ...],
"maps": [[old, new], ...], "divide": [[sizes, width], ...], "merge": [[sizes, n], ...]}
and writes the same keys with dask's answers: plan steps, old_to_new as
[block, start, stop] triples, divided and merged sizes.
"""
import importlib
import json
import sys

from dask.array.rechunk import divide_to_width, merge_to_number, plan_rechunk

dask_rechunk = importlib.import_module("dask.array.rechunk")
# named _old_to_new before dask 2023
old_to_new = getattr(dask_rechunk, "old_to_new", None) or dask_rechunk._old_to_new


def tup(chunks):
    return tuple(tuple(axis) for axis in chunks)


def main():
    q = json.load(sys.stdin)
    out = {
        "plans": [
            [list(map(list, step)) for step in plan_rechunk(tup(o), tup(n), item, thr, lim)]
            for o, n, item, lim, thr in q["plans"]
        ],
        "maps": [
            [[[[b, s.start, s.stop] for b, s in block] for block in axis] for axis in old_to_new(tup(o), tup(n))]
            for o, n in q["maps"]
        ],
        "divide": [list(divide_to_width(tuple(s), w)) for s, w in q["divide"]],
        "merge": [list(merge_to_number(tuple(s), n)) for s, n in q["merge"]],
    }
    json.dump(out, sys.stdout)


main()
