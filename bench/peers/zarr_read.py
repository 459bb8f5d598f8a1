# bench/zarr's Python side.
#   make PATH X Y Z      writes the benchmark array (uint16, blosc blosclz 9 bitshuffle, 32^3 chunks)
#                        with zarr-python 2.13, slab by slab
#   dask PATH REPEATS THREADS   da.from_zarr(PATH).compute() on the threaded scheduler
import sys, time
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


if __name__ == '__main__':
    if sys.argv[1] == 'make':
        make(sys.argv[2], tuple(int(v) for v in sys.argv[3:6]))
    else:
        dask_read(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]))
