"""Prints bench/zarr's tables from the lines its contestants printed.

  table.py RESULTS X Y Z    RESULTS: the `NAME case=... best=... [cpu=...]` lines; X Y Z: the array's shape
"""
import sys
rows, sums = [], {}
for line in open(sys.argv[1]):
    name, *fields = line.split()
    f = dict(x.split("=", 1) for x in fields)
    case = f["case"].removesuffix(".zarr")
    if "best" not in f:  # a round trip's output sum
        sums[(name, case)] = int(f["sum"])
        continue
    rows.append(dict(who=name, case=case, best=float(f["best"]), median=float(f["median"]),
                     cpu=float(f["cpu"]) if "cpu" in f else None, sum=int(f.get("sum", -1)),
                     rss=f.get("peak_rss_mib")))
def find(who, case):
    return next((r for r in rows if r["who"] == who and r["case"] == case), None)
shape = tuple(int(v) for v in sys.argv[2:5])
gib = shape[0] * shape[1] * shape[2] * 2 / 2**30
print(f"\nread all of a {shape} uint16 array ({gib:g} GiB) into one array; wall seconds, best of runs;"
      " cpu: the least CPU seconds of a run (user + system), steadier than wall time on a shared machine")
print(f"{'case':<14}{'who':<40}{'best s':>8}{'median s':>10}{'cpu s':>7}{'GiB/s':>7}  vs")
labels = {"tessera": "tessera compute() (2 workers)", "tessera-into": "tessera store into one array (2 workers)",
          "dask": "zarr-python + dask (2 threads)", "blosc-limit": "c-blosc from memory (2 threads)",
          "zarrita": "zarrita (node, 1 thread)", "io-limit": "c-blosc + files -> one array (2 threads)"}
for case in ["a_v2_blosc", "b_v3_sharded", "c_v3_raw"]:
    t, ti = find("tessera", case), find("tessera-into", case)
    for who in ["tessera", "tessera-into", "dask", "blosc-limit", "io-limit", "zarrita"]:
        r = find(who, case)
        if r is None:
            continue
        vs = ""
        if who in ("dask", "zarrita"):
            vs = f"tessera compute() is {r['best'] / t['best']:.1f}x faster"
        elif who in ("blosc-limit", "io-limit"):
            vs = (f"tessera reaches {100 * r['best'] / t['best']:.0f}% of it (compute), "
                  f"{100 * r['best'] / ti['best']:.0f}% (into one array); "
                  f"in CPU seconds {100 * r['cpu'] / t['cpu']:.0f}%, {100 * r['cpu'] / ti['cpu']:.0f}%")
        cpu = f"{r['cpu']:7.3f}" if r["cpu"] is not None else f"{'-':>7}"
        print(f"{case:<14}{labels[who]:<40}{r['best']:8.3f}{r['median']:10.3f}{cpu}{gib / r['best']:7.2f}  {vs}")
print("io-limit: each chunk (shard) file opened and read with pread, decoded by c-blosc into a thread's buffer and"
      " copied row by row into one array allocated once, no tasks: what any reader of these files into one array pays")
read_sums = {r["sum"] for r in rows if r["who"] not in ("blosc-limit",) and r["case"] != "roundtrip"}
print("all readers read the same values (sums agree)" if len(read_sums) == 1 else f"SUMS DIFFER: {sorted(read_sums)}")

print(f"\nround trip: read (a), rechunk to (1, {shape[1]}, {shape[2]}) slices, write zstd:3; "
      "wall seconds, best of runs")
print(f"{'who':<44}{'best s':>8}{'median s':>10}{'cpu s':>8}{'peak RSS MiB':>14}  vs")
rt = {"tessera": "tessera rechunk (v3, --max-mem 256MiB)", "dask": "dask rechunk().to_zarr() (v2)",
      "dask-sync": "dask, then os.sync() (durable, as tessera)"}
t = find("tessera", "roundtrip")
for who, label in rt.items():
    r = find(who, "roundtrip")
    if r is None:
        continue
    vs = "" if who == "tessera" else (f"tessera is {r['best'] / t['best']:.1f}x faster"
                                      f" ({r['cpu'] / t['cpu']:.1f}x in CPU seconds)")
    print(f"{label:<44}{r['best']:8.3f}{r['median']:10.3f}{r['cpu']:8.3f}{r['rss']:>14}  {vs}")
z, w, b = find("zstd-limit", "roundtrip"), find("write-limit", "roundtrip"), find("blosc-limit", "a_v2_blosc")
d = find("dask", "roundtrip")
if z is not None and b is not None:
    print(f"{'zstd:3 encoding the slices, memory (2 thr)':<44}{z['best']:8.3f}{z['median']:10.3f}{z['cpu']:8.3f}"
          f"{'-':>14}")
    if w is not None:
        print(f"{'writing them to files + syncfs (2 threads)':<44}{w['best']:8.3f}{w['median']:10.3f}{w['cpu']:8.3f}"
              f"{'-':>14}")
    # Wall times of runs minutes apart on a shared machine do not compare; CPU seconds do.
    floor, floor_cpu = z["best"] + b["best"], z["cpu"] + b["cpu"]
    vs = f"tessera reaches {100 * floor / t['best']:.0f}% of it ({100 * floor_cpu / t['cpu']:.0f}% in CPU s)"
    if d is not None:
        vs += (f"; dask / floor: {d['best'] / floor:.1f}x ({d['cpu'] / floor_cpu:.1f}x in CPU s),"
               " the most any zstd:3 writer could beat dask by")
    print(f"{'floor: c-blosc decode (a) + zstd:3 encode':<44}{floor:8.3f}{'':>10}{floor_cpu:8.3f}{'-':>14}  {vs}")
rt_sums = {v for (who, case), v in sums.items() if case == "roundtrip"}
print("both outputs hold the same values (sums agree)" if len(rt_sums) == 1 and read_sums == rt_sums
      else f"ROUND TRIP SUMS DIFFER: {sorted(rt_sums)} vs {sorted(read_sums)}")
