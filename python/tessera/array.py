"""tessera.array: lazy chunked n-D arrays whose operations run in C++.

    import tessera.array as ta
    x = ta.from_zarr("big.zarr")                 # lazy: nothing is read yet
    y = (x - ta.mean(x, axis=0)) / ta.std(x, axis=0)
    ta.store(y, "out.zarr", codec="zstd:3")      # or y.compute(): a numpy array, no copy

Element-wise operators broadcast as numpy does; reductions take numpy's
``axis`` and ``keepdims``; ``x.T``, ``x @ y``, ``fft2``/``rfft2`` as numpy's.
Every operation builds graph layers in C++; ``compute()`` and ``store`` run the
graph on tessera's scheduler without the GIL. ``to_dask`` and ``from_dask``
convert to and from ``dask.array.Array``.
"""
import math

import numpy as np

from ._tessera._array import (Array, _Blocks, _from_graph, fft2, from_hdf5, from_netcdf, from_npy, from_numpy, from_zarr, matmul, max, mean, min, rfft2, std, store,
                              sum, var)


def transpose(x, axes=None):
    """``x`` with its axes reversed, or permuted as ``axes`` says (numpy's transpose)."""
    return x.transpose() if axes is None else x.transpose(tuple(axes))


def to_dask(x):
    """``x`` as a ``dask.array.Array`` with the same chunks, dtype and values.

    Its graph has one task per block, ``("tessera-" + x.name, i, j, ...)``, that
    computes that block by calling into tessera: the part of ``x``'s graph the
    block needs runs in C++ on the calling worker without the GIL. Any dask
    scheduler runs it (``scheduler=tessera.get`` too), and dask's operations apply
    on top. Work that several blocks share (an input block read by two output
    blocks of a rechunk, a reduction's inputs) is done once per block that needs
    it; for a whole-array result ``x.compute()`` does each once.

        d = ta.to_dask(ta.from_zarr("big.zarr"))
        d.mean(axis=0).compute(scheduler=tessera.get)
    """
    import dask.array as da

    if not isinstance(x, Array):
        raise TypeError(f"to_dask: expected a tessera.array.Array, found {type(x).__name__}")
    blocks = _Blocks(x)
    name = "tessera-" + x.name
    dsk = {(name,) + index: (blocks,) + index for index in np.ndindex(*(len(c) for c in x.chunks))}
    return da.Array(dsk, name, chunks=x.chunks, dtype=x.dtype)


def from_dask(d):
    """The ``dask.array.Array`` ``d`` as a tessera array with the same chunks, dtype and values.

    Any dask graph converts: it is converted once, as ``tessera.get`` converts
    one, into tasks of tessera's graph (dask's task functions run as Python
    under the GIL, on tessera's scheduler), and each block becomes a tessera
    block by copying the numpy array dask's task returned. tessera's operations
    then run in C++ over those blocks. To read a zarr store or .npy file, prefer
    ``from_zarr`` / ``from_npy``, which read in C++ without Python.

    Refused, with a ``tessera.InvalidValueError`` or ``TypeError`` saying what could not
    be converted: chunks of unknown size (NaN; call ``d.compute_chunk_sizes()``
    first), a dtype tessera has no type for (object, strings, structured), and,
    when the blocks are computed, a block that is not a numpy array of its
    declared shape and dtype (a sparse or cupy block, a masked array's data).
    """
    import dask.array as da

    from ._tessera import InvalidValueError as _ValueError

    if not isinstance(d, da.Array):
        raise TypeError(f"from_dask: expected a dask.array.Array, found {type(d).__name__}")
    for axis, sizes in enumerate(d.chunks):
        if any(isinstance(s, float) and math.isnan(s) for s in sizes):
            raise _ValueError(f"from_dask: {d.name} has chunks of unknown size (nan) along axis {axis}; "
                              "call compute_chunk_sizes() first")
    if d.dtype.kind not in "biufc":
        raise _ValueError(f"from_dask: {d.name} has dtype {d.dtype}; tessera arrays hold bool, integer, float "
                          "and complex numbers")
    dsk = dict(d.__dask_optimize__(d.__dask_graph__(), d.__dask_keys__()))
    return _from_graph(dsk, d.name, [list(map(int, c)) for c in d.chunks], d.dtype)


__all__ = ["to_dask", "from_dask", "Array", "from_npy", "from_zarr", "from_hdf5", "from_netcdf", "from_numpy", "store", "sum", "mean", "std", "var", "min", "max",
           "transpose", "matmul", "fft2", "rfft2"]
