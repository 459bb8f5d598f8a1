"""What a scheduler's own state costs in memory on a graph of many tiny tasks: (x + x.T).sum()
over 4 x 4 float64 blocks (--blocks per side; 64 gives ~17,700 tasks), whose results are a few
hundred bytes, so the peak over the start is the scheduler's state and the graph it holds.

  /usr/bin/python3 bench/python/graph_memory.py [--blocks 64]

Each side runs in a process of its own (imports done before the measure), and the row is
ru_maxrss after compute() less ru_maxrss before it.
"""
import argparse
import json
import resource
import subprocess
import sys
import time


def child(side, blocks):
    import dask.array as da
    import tessera

    x = da.ones((4 * blocks, 4 * blocks), chunks=(4, 4))
    y = (x + x.T).sum()
    tasks = len(dict(y.__dask_graph__()))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    start = time.perf_counter()
    y.compute(scheduler="threads" if side == "dask" else tessera.get, num_workers=2)
    seconds = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(json.dumps({"tasks": tasks, "mib": (after - before) / 1024, "seconds": seconds}))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--blocks", type=int, default=64)
    p.add_argument("--child", help=argparse.SUPPRESS)
    args = p.parse_args()
    if args.child:
        return child(args.child, args.blocks)
    print(f"{'scheduler':12} {'tasks':>7} {'peak over start MiB':>20} {'seconds':>8}")
    for side in ("dask", "tessera.get"):
        out = subprocess.run([sys.executable, __file__, "--child", side, "--blocks", str(args.blocks)],
                             capture_output=True, text=True, check=True)
        r = json.loads(out.stdout.strip().splitlines()[-1])
        print(f"{side:12} {r['tasks']:7d} {r['mib']:20.1f} {r['seconds']:8.2f}")


if __name__ == "__main__":
    sys.exit(main())
