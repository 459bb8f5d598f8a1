"""The GIL is released during tessera's long calls: another Python thread runs while
tessera.rechunk, tessera.array's compute and store, and tessera.get work or wait.

A thread records the time of each turn of a loop that sleeps 5 ms a turn. Held by the
calling thread, the GIL would stop that loop from the moment the call enters C++ until
it returns: Python may hand the GIL over only between bytecodes, so the turns it could
take near the call's start and end are counted out (50 ms either side), and every turn
left, in the middle of the call, is one that ran while tessera worked. The calls take
0.2 to 2 s; at least 5 turns in the middle is a low bound (about 150 a second on an idle
machine), not a rate. Where the work itself needs the GIL (tessera.get's Python tasks), a
call that held it would hang instead: faulthandler then ends the run after HANG seconds
with every thread's traceback (on the terminal: pytest's capture is suspended during the
call, or the traceback would go with the process)."""
import faulthandler
import pathlib
import threading
import time
from collections.abc import Callable, Hashable
from typing import Any

import numpy as np
import pytest
import zarr

import tessera
import tessera.array as ta

MARGIN = 0.05  # seconds at each end of the call where a turn does not count
HANG = 60  # seconds after which a call is taken to hang


def _turns_during(call: Callable[[], object], capsys: pytest.CaptureFixture[str]) -> int:
    """Runs `call` while a thread loops, and returns how many of the thread's turns fell
    inside the call, `MARGIN` away from its ends."""
    stop = threading.Event()
    turns: list[float] = []

    def loop() -> None:
        while not stop.is_set():
            turns.append(time.monotonic())
            time.sleep(0.005)

    thread = threading.Thread(target=loop)
    thread.start()
    try:
        with capsys.disabled():
            faulthandler.dump_traceback_later(HANG, exit=True)
            start = time.monotonic()
            call()
            end = time.monotonic()
    finally:
        faulthandler.cancel_dump_traceback_later()
        stop.set()
        thread.join()
    return sum(1 for t in turns if start + MARGIN < t < end - MARGIN)


@pytest.fixture(scope="module")
def x() -> ta.Array:
    return ta.from_numpy(np.random.default_rng(11).standard_normal((3072, 3072)), chunks=512)


def test_compute_releases_the_gil(x: ta.Array, capsys: pytest.CaptureFixture[str]) -> None:
    assert _turns_during(lambda: (x @ x).compute(), capsys) >= 5


def test_store_releases_the_gil(tmp_path: pathlib.Path, x: ta.Array, capsys: pytest.CaptureFixture[str]) -> None:
    assert _turns_during(lambda: ta.store(x @ x, str(tmp_path / "product.zarr")), capsys) >= 5


def test_rechunk_releases_the_gil(tmp_path: pathlib.Path, capsys: pytest.CaptureFixture[str]) -> None:
    values = np.random.default_rng(12).standard_normal((2048, 2048))
    source = str(tmp_path / "rows.zarr")
    zarr.open(source, mode="w", shape=values.shape, chunks=(16, 2048), dtype=values.dtype)[:] = values
    target = str(tmp_path / "columns.zarr")

    def rechunk() -> None:
        tessera.rechunk(source, target, chunks=(2048, 16), codec="blosc", progress=False)

    assert _turns_during(rechunk, capsys) >= 5


def test_get_releases_the_gil_while_it_waits(capsys: pytest.CaptureFixture[str]) -> None:
    # Tasks that release the GIL themselves (a numpy product runs in BLAS without it):
    # the caller waits for them, and its wait must not hold the GIL either.
    m = np.random.default_rng(13).standard_normal((1024, 1024))
    dsk: dict[Hashable, Any] = {("p", i): (np.dot, m, m) for i in range(8)}
    dsk["out"] = (len, [("p", i) for i in range(8)])
    assert _turns_during(lambda: tessera.get(dsk, "out"), capsys) >= 5
