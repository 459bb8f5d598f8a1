"""tessera from Python: a dask scheduler whose scheduling, ordering, release and
memory budget run in C++ (tessera.get), only the task bodies in Python.

    import dask, tessera
    dask.config.set(scheduler=tessera.get)     # every compute() now runs on tessera
"""
from . import array
from ._get import cull, fuse, get, order
from ._tessera import (Cancelled, ChunkError, Error, MemoryLimitError, StorageError, TaskError, TypeError,
                       ValueError, rechunk)

__all__ = ["get", "order", "cull", "fuse", "rechunk", "Error", "ChunkError", "StorageError", "Cancelled",
           "TaskError", "MemoryLimitError", "TypeError", "ValueError"]
