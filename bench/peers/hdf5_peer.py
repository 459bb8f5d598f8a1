"""The peers' side of scripts/bench hdf5 (bench/hdf5/run.sh).

  make FILE ROWS          a float32 dataset /x of ROWS x 1024, chunks 256 x 1024 (1 MiB), deflate 4 + shuffle,
                          written by h5py: smooth values with noise, so deflate has something to do
  dask-sum FILE W         (a) da.from_array(h5py dataset, chunks=its chunks).sum() on dask's threaded scheduler
  dask-zarr FILE OUT W    (b) the same to_zarr(OUT) with zstd level 3 (numcodecs)
  dask-norm FILE OUT W    (c) (x - x.mean(0)) / x.std(0) into OUT:/x, gzip 4 + shuffle (statistics first, as tessera)
  floor FILE W            the deflate decode floor: the chunks' stored bytes read into memory first, then
                          zlib inflating them on W threads (zlib releases the GIL); prints wall and CPU seconds
  measure NAME TASK REPEATS CMD...   runs CMD REPEATS times; prints "NAME TASK best_seconds peak_rss_mib
                          cpu_seconds stdout" (CPU: user + system of one run, the mean: on a loaded machine
                          the wall time says more of the load than of the program)
"""
import os
import resource
import subprocess
import sys
import time


def make(path, rows):
    import h5py
    import numpy as np
    rows = int(rows)
    with h5py.File(path, 'w') as f:
        d = f.create_dataset('x', shape=(rows, 1024), dtype='<f4', chunks=(256, 1024), compression='gzip',
                             compression_opts=4, shuffle=True)
        rng = np.random.default_rng(0)
        base = np.sin(np.linspace(0, 20, 1024, dtype=np.float32))
        for start in range(0, rows, 8192):
            n = min(8192, rows - start)
            noise = rng.standard_normal((n, 1024), dtype=np.float32)
            d[start:start + n] = np.round(base + 0.1 * noise, 3)


def dataset(path):
    import dask.array as da
    import h5py
    ds = h5py.File(path, 'r')['x']
    return da.from_array(ds, chunks=ds.chunks)


def dask_sum(path, workers):
    import dask
    print(float(dataset(path).sum().compute(scheduler='threads', num_workers=int(workers))))


def dask_zarr(path, out, workers):
    import dask
    import numcodecs
    import zarr
    x = dataset(path)
    z = zarr.open(out, mode='w', shape=x.shape, chunks=x.chunksize, dtype=x.dtype, compressor=numcodecs.Zstd(3))
    with dask.config.set(scheduler='threads', num_workers=int(workers)):
        x.store(z, lock=False)


def dask_norm(path, out, workers):
    import dask
    import dask.array as da
    x = dataset(path)
    with dask.config.set(scheduler='threads', num_workers=int(workers)):
        m, s = dask.compute(x.mean(0), x.std(0))
        y = (x - m) / s
        da.to_hdf5(out, '/x', y, chunks=x.chunksize, compression='gzip', compression_opts=4, shuffle=True)


def floor(path, workers):
    import h5py
    import zlib
    from concurrent.futures import ThreadPoolExecutor
    with h5py.File(path, 'r') as f:
        dsid = f['x'].id
        chunks = [dsid.read_direct_chunk(dsid.get_chunk_info(i).chunk_offset)[1] for i in range(dsid.get_num_chunks())]
    with ThreadPoolExecutor(int(workers)) as pool:
        list(pool.map(zlib.decompress, chunks[:8]))  # threads started, zlib warm
        start, cpu = time.perf_counter(), time.process_time()
        list(pool.map(zlib.decompress, chunks))
        print(f'{time.perf_counter() - start:.3f} {time.process_time() - cpu:.3f}')


def measure(name, task, repeats, *cmd):
    best, peak = None, 0
    for _ in range(int(repeats)):
        start = time.perf_counter()
        proc = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        elapsed = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f'{name} {task} failed: {proc.stderr[-2000:]}')
        best = elapsed if best is None else min(best, elapsed)
    # ru_maxrss of the children: the largest child's peak, in KiB.
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (usage.ru_utime + usage.ru_stime) / int(repeats)
    print(f'{name} {task} {best:.3f} {usage.ru_maxrss / 1024:.0f} {cpu:.3f} {proc.stdout.strip()}', flush=True)


if __name__ == '__main__':
    cmd, args = sys.argv[1], sys.argv[2:]
    {'make': make, 'dask-sum': dask_sum, 'dask-zarr': dask_zarr, 'dask-norm': dask_norm, 'floor': floor,
     'measure': measure}[cmd](*args)
