"""The graph of bench/bench_optimize.cpp built, culled and ordered by dask.

Prints one line: tasks, then CPU seconds of build, cull and order.
Run with the interpreter that has dask (Debian: /usr/bin/python3):
    /usr/bin/python3 bench/peers/order_peer.py 100000
"""
import sys
import time

from dask.optimization import cull
from dask.order import order


def f(*args):
    return 0


def reduce(dsk, level, group, name, fan):
    depth = 0
    while len(level) > 1:
        nxt = []
        for i in range(0, len(level), fan):
            k = (name, group, depth, len(nxt))
            dsk[k] = (f, *level[i:i + fan])
            nxt.append(k)
        level = nxt
        depth += 1
    return level[0]


def build(target):
    blocks = 64
    groups = max(1, target // 214)
    dsk = {}
    partials = []
    for grp in range(groups):
        level = []
        for b in range(blocks):
            dsk[("random", grp, b)] = (f,)
            dsk[("f", grp, b)] = (f, ("random", grp, b))
            dsk[("g", grp, b)] = (f, ("f", grp, b))
            level.append(("g", grp, b))
        dsk[("unused", grp)] = (f, ("f", grp, 0))
        partials.append(reduce(dsk, level, grp, "sum-partial", 4))
    out = reduce(dsk, partials, -1, "sum-aggregate", 8)
    return dsk, out


def main():
    n = int(sys.argv[1])
    t0 = time.process_time()
    dsk, out = build(n)
    t1 = time.process_time()
    culled, _ = cull(dsk, [out])
    t2 = time.process_time()
    order(culled)
    t3 = time.process_time()
    print(len(dsk), t1 - t0, t2 - t1, t3 - t2)


if __name__ == "__main__":
    main()
