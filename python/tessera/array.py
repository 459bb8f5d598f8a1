"""tessera.array: lazy chunked n-D arrays whose operations run in C++.

    import tessera.array as ta
    x = ta.from_zarr("big.zarr")                 # lazy: nothing is read yet
    y = (x - ta.mean(x, axis=0)) / ta.std(x, axis=0)
    ta.store(y, "out.zarr", codec="zstd:3")      # or y.compute(): a numpy array, no copy

Element-wise operators broadcast as numpy does; reductions take numpy's
``axis`` and ``keepdims``; ``x.T``, ``x @ y``, ``fft2``/``rfft2`` as numpy's.
Every operation builds graph layers in C++; ``compute()`` and ``store`` run the
graph on tessera's scheduler without the GIL.
"""
from ._tessera._array import (Array, fft2, from_npy, from_numpy, from_zarr, matmul, max, mean, min, rfft2, std, store,
                              sum, var)


def transpose(x, axes=None):
    """``x`` with its axes reversed, or permuted as ``axes`` says (numpy's transpose)."""
    return x.transpose() if axes is None else x.transpose(tuple(axes))


__all__ = ["Array", "from_npy", "from_zarr", "from_numpy", "store", "sum", "mean", "std", "var", "min", "max",
           "transpose", "matmul", "fft2", "rfft2"]
