"""dask's scheduler tests (dask/tests/test_threaded.py and test_local.py, shipped by
python3-dask) run with tessera.get in place of dask.threaded.get and get_sync.

The tests are dask's own functions, collected here with the scheduler names of
their modules swapped: `get` (dask.threaded.get) becomes tessera.get, `get_sync`
becomes tessera.get with one worker (the same promise: one thread, in order), and
`order` (dask.order.order, which test_complex_ordering compares the run against)
becomes tessera.order, the order tessera runs by. Tests that import
dask.threaded.get inside their body see tessera.get through the autouse fixture.

Tests that cannot apply, each with its reason:
"""
import functools

import dask.threaded
import pytest
from dask.tests import test_local as _local
from dask.tests import test_threaded as _threaded

import tessera

NOT_APPLICABLE = {
    # test_local: these test dask.local's internal helpers, not a get function.
    "test_start_state": "tests dask.local.start_state_from_dask, not a scheduler",
    "test_start_state_looks_at_cache": "tests dask.local.start_state_from_dask, not a scheduler",
    "test_start_state_with_redirects": "tests dask.local.start_state_from_dask, not a scheduler",
    "test_start_state_with_independent_but_runnable_tasks": "tests dask.local.start_state_from_dask, not a scheduler",
    "test_start_state_with_tasks_no_deps": "tests dask.local.start_state_from_dask, not a scheduler",
    "test_finish_task": "tests dask.local.finish_task, not a scheduler",
    "test_sort_key": "tests dask.local.sortkey, not a scheduler",
    # test_threaded:
    "test_interrupt": (
        "asserts that get returns within 3 s of SIGINT while 7 s tasks run; dask.threaded "
        "abandons running tasks to its pool, tessera lets them finish so that the run's "
        "scratch files are removed before KeyboardInterrupt is raised "
        "(test_get.py::test_ctrl_c_* checks tessera's interrupt)"
    ),
    "test_pool_kwarg": (
        "asserts that a pool of 3 threads runs the tasks on 3 threads; tessera runs tasks on "
        "its own workers, at most oneTBB's thread cap (the machine's cores: 2 on CI)"
    ),
}

# Run, and expected to fail until tessera's order changes: a divergence, not a skip.
KNOWN_DIVERGENCES = {
    "test_ordering": (
        "independent roots ('x', 0..9) read by one task: dask.order runs them in key order, "
        "tessera.order gives ('x', 9) the first priority (ties broken the other way)"
    ),
}

_sync = functools.partial(tessera.get, num_workers=1)
# tessera's functions take more options than the dask ones they replace (mypy sees the
# signatures differ; the tests call them with dask's arguments only).
_threaded.get = tessera.get  # type: ignore[assignment]
_local.get_sync = _sync
_local.order = tessera.order  # type: ignore[assignment]


@pytest.fixture(autouse=True)
def _tessera_as_dask_threaded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(dask.threaded, "get", tessera.get)


class TestGetAsync(_local.TestGetAsync):
    get = staticmethod(_sync)


for _module in (_local, _threaded):
    for _name in dir(_module):
        if _name.startswith("test_") and _name not in NOT_APPLICABLE:
            test = getattr(_module, _name)
            if _name in KNOWN_DIVERGENCES:
                test = pytest.mark.xfail(reason=KNOWN_DIVERGENCES[_name], strict=True)(test)
            globals()[_name] = test
