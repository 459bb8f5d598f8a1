"""tessera from Python: a dask scheduler whose scheduling, ordering, release and
memory budget run in C++ (tessera.get), only the task bodies in Python; lazy
chunked arrays whose operations run in C++ (tessera.array); and the rechunk of
zarr stores and .npy files (tessera.rechunk).

    import dask.array as da, tessera
    x = da.ones((1000, 1000), chunks=100)
    x.sum().compute(scheduler="tessera")       # importing tessera registers the name
    dask.config.set(scheduler="tessera")       # every compute() now runs on tessera

tessera's errors are ``tessera.Error`` subclasses; those that are also a builtin
error derive from it too (``InvalidValueError`` is a ``ValueError``), so
``except ValueError`` catches them.
"""
from ._version import __version__
from ._get import cull, fuse, get, order
from ._dask import register
from ._tessera import (Cancelled, ChunkError, Error, InvalidTypeError, InvalidValueError, MemoryLimitError,
                       StorageError, TaskError, rechunk)

# Their former names, kept for code written before: not in __all__, so that
# `from tessera import *` leaves the builtins alone.
from ._tessera import TypeError, ValueError  # noqa: F401 (re-exported as attributes)

__all__ = ["get", "order", "cull", "fuse", "rechunk", "register", "array", "Error", "ChunkError",
           "StorageError", "Cancelled", "TaskError", "MemoryLimitError", "InvalidTypeError", "InvalidValueError"]

register()


def __getattr__(name):
    """``tessera.array`` on first use: it imports numpy, which ``import tessera`` does not."""
    if name == "array":
        import importlib

        return importlib.import_module(".array", __name__)
    raise AttributeError(f"module 'tessera' has no attribute {name!r}")


def __dir__():
    """The module's names, ``array`` among them before its first use."""
    return sorted(set(globals()) | {"array"})
