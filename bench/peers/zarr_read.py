# bench/zarr's Python side.
#   make PATH X Y Z      writes the benchmark array (uint16, blosc blosclz 9 bitshuffle, 32^3 chunks)
#                        with zarr-python 2.13, slab by slab
#   dask PATH REPEATS THREADS   da.from_zarr(PATH).compute() on the threaded scheduler
#   roundtrip SRC THREADS DST   da.from_zarr(SRC).rechunk((1, Y, X)).to_zarr(DST) with zstd level 3
#                        (zarr-python 2.13 writes v2 only)
#   roundtrip-sync SRC THREADS DST   the same, then os.sync(): on the disk, as tessera leaves its output
#   measure NAME CASE WORKERS REPEATS CMD...   runs CMD REPEATS times (removing the last argument,
#                        its output, before each); prints its best and median seconds, its least CPU
#                        seconds (user + system) and peak RSS
#                        (its output's sum: bench_zarr sum)
import resource, shutil, subprocess, sys, time
import numpy as np
import zarr
from numcodecs import Blosc


def make(path, shape):
    z = zarr.open(path, mode='w', shape=shape, chunks=(32, 32, 32), dtype='<u2',
                  compressor=Blosc('blosclz', 9, Blosc.BITSHUFFLE))
    rng = np.random.default_rng(0)
    y, x = np.mgrid[0:shape[1], 0:shape[2]]
    for s in range(0, shape[0], 32):
        k = np.arange(s, min(s + 32, shape[0]))[:, None, None]
        # A smooth field with a few bits of noise, as measured data looks.
        v = (1000 + 400 * np.sin(x / 37.0 + k / 23.0) + 300 * np.cos(y / 29.0)).astype('<u2')
        z[s:s + len(k)] = v + rng.integers(0, 16, size=v.shape, dtype='<u2')


def dask_read(path, repeats, threads):
    import dask
    import dask.array as da
    times = []
    total = 0
    for _ in range(repeats):
        t0 = time.perf_counter()
        a = da.from_zarr(path).compute(scheduler='threads', num_workers=threads)
        times.append(time.perf_counter() - t0)
        total = int(a.sum(dtype=np.uint64))
    times.sort()
    print(f"dask case={path.rstrip('/').rsplit('/', 1)[-1]} workers={threads} best={times[0]:.4f} "
          f"median={times[len(times) // 2]:.4f} sum={total}")


def roundtrip(src, threads, dst, sync):
    import dask.array as da
    from numcodecs import Zstd
    x = da.from_zarr(src)
    x.rechunk((1,) + x.shape[1:]).to_zarr(dst, compressor=Zstd(3), compute=False).compute(
        scheduler='threads', num_workers=threads)
    if sync:
        import os
        os.sync()


def measure(name, case, workers, repeats, cmd):
    times, cpus = [], []
    for _ in range(repeats):
        shutil.rmtree(cmd[-1], ignore_errors=True)
        t0, u0 = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        rc = subprocess.run(cmd).returncode
        u1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        times.append(time.perf_counter() - t0)
        cpus.append(u1.ru_utime + u1.ru_stime - u0.ru_utime - u0.ru_stime)
        if rc != 0:
            sys.exit(f"{name}: {' '.join(cmd)} failed with status {rc}")
    times.sort()
    peak = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    print(f"{name} case={case} workers={workers} best={times[0]:.4f} median={times[len(times) // 2]:.4f} "
          f"cpu={min(cpus):.4f} peak_rss_mib={peak:.0f}", flush=True)


if __name__ == '__main__':
    if sys.argv[1] == 'make':
        make(sys.argv[2], tuple(int(v) for v in sys.argv[3:6]))
    elif sys.argv[1] in ('roundtrip', 'roundtrip-sync'):
        roundtrip(sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[1] == 'roundtrip-sync')
    elif sys.argv[1] == 'measure':
        measure(sys.argv[2], sys.argv[3], int(sys.argv[4]), int(sys.argv[5]), sys.argv[6:])
    else:
        dask_read(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
