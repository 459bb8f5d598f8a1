"""dask's own test class for foreign schedulers, with tessera.get."""
from dask.utils_test import GetFunctionTestMixin, inc

import tessera


class TestTesseraGet(GetFunctionTestMixin):
    get = staticmethod(tessera.get)

    def test_get_num_workers(self) -> None:
        assert self.get({"x": (inc, "y"), "y": 1}, "x", num_workers=2) == 2
