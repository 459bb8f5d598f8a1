"""dask.distributed's side of bench/mpi/rechunk.sh: from_zarr(SRC).rechunk((-1, 256)).to_zarr(DST) on a
LocalCluster of N single-threaded worker processes. Prints: seconds, CPU seconds (workers, scheduler and
client), the sum of the workers' peak RSS in MiB. A file of its own: worker processes import it."""
import resource
import sys
import time

import dask.array as da
from dask.distributed import Client, LocalCluster


def usage():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_maxrss, r.ru_utime + r.ru_stime


def main(src, dst, n):
    start = time.time()
    with LocalCluster(n_workers=n, threads_per_worker=1, processes=True, dashboard_address=None) as cluster, \
            Client(cluster) as client:
        da.from_zarr(src).rechunk((-1, 256)).to_zarr(dst)
        elapsed = time.time() - start
        workers = client.run(usage)
        sched = client.run_on_scheduler(usage)
    rss = sum(w[0] for w in workers.values())
    cpu = sum(w[1] for w in workers.values()) + sched[1] + usage()[1]
    print(f"{elapsed:.1f} {cpu:.1f} {rss / 1024:.0f}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2], int(sys.argv[3]))
