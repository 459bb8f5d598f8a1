"""dask's side of bench/fft/run.sh: the demo's steps 2 and 3 on the same image.

  fft_dask.py run IMAGE SCRATCH COL_BLOCK WORKERS
      da.fft.rfft along the rows of the zarr IMAGE (the demo's, compressed with
      blosc lz4 by default; numcodecs decodes it), cast to complex64, rechunked
      to column blocks (ROWS, COL_BLOCK) and written to the zarr SCRATCH (no
      compressor); then da.fft.fft along the columns of SCRATCH, the power
      spectrum, and its radial sums (one delayed task per column block, summed);
      prints the detected frequencies as the demo does.
  fft_dask.py kernels
      numpy.fft on the sizes bench_fft uses; prints NAME seconds=S per case.
"""
import sys
import time

import numpy as np


def radial_sums(block, col0, rows, cols, nbins, scale):
    ky = np.arange(rows)
    ky = np.where(2 * ky <= rows, ky, ky - rows) / rows
    kx = (col0 + np.arange(block.shape[1])) / cols
    weight = np.where((col0 + np.arange(block.shape[1]) == 0) | (2 * (col0 + np.arange(block.shape[1])) == cols),
                      1.0, 2.0)
    bins = np.rint(np.sqrt(ky[:, None] ** 2 + kx[None, :] ** 2) * scale).astype(np.int64)
    power = np.abs(block.astype(np.complex128)) ** 2 * weight[None, :]
    w = np.broadcast_to(weight[None, :], block.shape)
    return (np.bincount(bins.ravel(), weights=power.ravel(), minlength=nbins),
            np.bincount(bins.ravel(), weights=w.ravel(), minlength=nbins))


def add(parts):
    return (sum(p[0] for p in parts), sum(p[1] for p in parts))


def peaks(power, count):
    avg = np.where(count > 0, power / np.maximum(count, 1), 0.0)
    median = np.median(avg[2:][count[2:] > 0])
    return [k for k in range(2, len(avg) - 1)
            if avg[k] > 50 * median and avg[k] >= avg[k - 1] and avg[k] >= avg[k + 1]]


def run(image, scratch, col_block, workers):
    import dask
    import dask.array as da
    x = da.from_zarr(image)
    rows, cols = x.shape
    y = da.fft.rfft(x, axis=1).astype(np.complex64)
    y.rechunk((rows, col_block)).to_zarr(scratch, compressor=None, compute=False).compute(
        scheduler="threads", num_workers=workers)
    f = da.fft.fft(da.from_zarr(scratch), axis=0)
    scale = float(max(rows, cols))
    nbins = int(scale * np.sqrt(0.5)) + 3
    offsets = np.cumsum((0,) + f.chunks[1])
    blocks = f.to_delayed().ravel()
    parts = [dask.delayed(radial_sums)(b, int(offsets[j]), rows, cols, nbins, scale) for j, b in enumerate(blocks)]
    power, count = dask.delayed(add)(parts).compute(scheduler="threads", num_workers=workers)
    found = peaks(power, count)
    print("detected frequencies (cycles/sample): " + " ".join(f"{k / scale:.5f}" for k in found), flush=True)


# The kernel sizes of bench_fft: (name, dtype, shape, kind, axis).
KERNELS = [
    ("rfft-rows-f32", np.float32, (1024, 16384), "rfft", 1),
    ("fft-cols-c64", np.complex64, (16384, 128), "fft", 0),
    ("fft-rows-c128", np.complex128, (512, 8192), "fft", 1),
    ("rfft-rows-f64-3000", np.float64, (1000, 3000), "rfft", 1),
    ("ifft-cols-c128-1000", np.complex128, (1000, 500), "ifft", 0),
]


def kernels(repeats=3):
    rng = np.random.default_rng(0)
    for name, dtype, shape, kind, axis in KERNELS:
        a = rng.standard_normal(shape)
        if np.dtype(dtype).kind == "c":
            a = a + 1j * rng.standard_normal(shape)
        a = a.astype(dtype)
        f = getattr(np.fft, kind)
        best = float("inf")
        for _ in range(repeats):
            t = time.perf_counter()
            f(a, axis=axis)
            best = min(best, time.perf_counter() - t)
        print(f"{name} numpy={best:.4f}", flush=True)


def main():
    cmd, *args = sys.argv[1:]
    if cmd == "run":
        run(args[0], args[1], int(args[2]), int(args[3]))
    elif cmd == "kernels":
        kernels()
    else:
        sys.exit(__doc__)


main()
