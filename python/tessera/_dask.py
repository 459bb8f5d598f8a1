"""tessera's place in dask: the scheduler name "tessera" and dask's configuration keys.

``import tessera`` calls ``register()``; dask then accepts ``scheduler="tessera"``
wherever it takes a scheduler name (``compute``, ``persist``, ``dask.config.set``).
``tessera.get`` reads dask's ``num_workers`` and tessera's own keys::

    dask.config.set({"tessera.memory-limit": "4GiB", "tessera.spill-dir": "/scratch"})
"""
from __future__ import annotations

from ._get import get

#: The dask configuration keys tessera.get reads when its argument is not given.
MEMORY_LIMIT_KEY = "tessera.memory-limit"
SPILL_DIR_KEY = "tessera.spill-dir"


def register(name: str = "tessera") -> None:
    """Registers ``tessera.get`` in dask's named schedulers as ``name``.

    ``import tessera`` does it with the name "tessera"; call it again after
    something reset dask's table, or to add another name.

    Parameters
    ----------
    name : the scheduler name dask then accepts (default "tessera")

    Returns
    -------
    None

    Example
    -------
    >>> import dask, tessera
    >>> tessera.register()
    >>> dask.compute(dask.delayed(sum)([1, 2]), scheduler="tessera")
    (3,)
    """
    try:
        from dask.base import named_schedulers
    except ImportError:  # no dask: tessera.array and tessera.rechunk work without it
        return
    named_schedulers[name] = get
