"""A pytest plugin: every scheduler name dask knows runs on tessera.get.

    pytest -p tessera_scheduler /usr/lib/python3/dist-packages/dask/array/tests/test_slicing.py

dask.array's tests compute with scheduler="sync" (assert_eq) or the configured
default; dask.base.named_schedulers maps "sync", "synchronous", "threads",
"threading" (and "processes", which stays dask's) to get functions. With this
plugin they all map to tessera.get, and so does the default.
"""
import dask
import dask.base
import pytest

import tessera


def pytest_configure(config: pytest.Config) -> None:
    for name in ("sync", "synchronous", "threads", "threading"):
        dask.base.named_schedulers[name] = tessera.get
    dask.config.set(scheduler=tessera.get)
