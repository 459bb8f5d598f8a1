"""dask's diagnostics and callbacks see a tessera run as they see dask's, and
tessera's own progress bar and trace."""
import json
import pathlib
from collections.abc import Hashable
from typing import Any

import dask
import dask.array as da
import numpy as np
import pytest
from dask.callbacks import Callback
from dask.diagnostics import ProgressBar, Profiler, ResourceProfiler

import tessera


def test_callback_hooks_see_every_task_with_dask_state() -> None:
    x = da.ones((40, 40), chunks=10)
    y = (x + x.T).sum()
    calls = {"start": 0, "start_state": 0}
    pretasks: list[Hashable] = []
    posttasks: list[Hashable] = []
    finishes: list[tuple[bool, int]] = []

    def start(dsk: dict[Hashable, Any]) -> None:
        calls["start"] += 1

    def start_state(dsk: dict[Hashable, Any], state: dict[str, Any]) -> None:
        calls["start_state"] += 1
        assert state["ready"] and "waiting" in state and "cache" in state

    def pretask(key: Hashable, dsk: dict[Hashable, Any], state: dict[str, Any]) -> None:
        assert key in state["running"]
        pretasks.append(key)

    def posttask(key: Hashable, result: object, dsk: dict[Hashable, Any], state: dict[str, Any],
                 worker_id: int) -> None:
        assert key in state["finished"] and key not in state["running"]
        posttasks.append(key)

    def finish(dsk: dict[Hashable, Any], state: dict[str, Any], failed: bool) -> None:
        finishes.append((failed, len(state["finished"])))

    with Callback(start, start_state, pretask, posttask, finish):
        assert y.compute(scheduler=tessera.get) == 3200
    assert calls["start"] == 1 and calls["start_state"] == 1
    assert sorted(map(str, pretasks)) == sorted(map(str, posttasks))
    assert finishes == [(False, len(posttasks))]


def test_failed_run_tells_finish() -> None:
    failed: list[bool] = []

    def boom(x: int) -> int:
        raise ValueError("boom")

    with Callback(finish=lambda dsk, state, f: failed.append(f)):
        try:
            tessera.get({"a": 1, "b": (boom, "a")}, "b")
        except ValueError:
            pass
    assert failed == [True]


def test_progress_bar_profiler_resource_profiler(capsys: pytest.CaptureFixture[str]) -> None:
    x = da.random.random((200, 200), chunks=50)
    y = (x @ x.T).mean()
    expected = y.compute(scheduler="sync")
    with ProgressBar(), Profiler() as prof, ResourceProfiler(dt=0.01) as rprof:
        got = y.compute(scheduler=tessera.get)
    assert np.isclose(got, expected)
    assert "100% Completed" in capsys.readouterr().out
    keys = {r.key for r in prof.results}
    assert len(keys) == len(prof.results) > 0
    assert all(r.end_time >= r.start_time for r in prof.results)
    assert len(rprof.results) >= 1


def test_tessera_progress_and_trace(tmp_path: pathlib.Path, capfd: pytest.CaptureFixture[str]) -> None:
    trace = tmp_path / "run.json"
    dsk: dict[Hashable, Any] = {("x", i): (sum, [i, 1]) for i in range(50)}
    dsk["total"] = (sum, [("x", i) for i in range(50)])
    assert tessera.get(dsk, "total", progress=True, trace=str(trace)) == sum(range(50)) + 50
    events = json.loads(trace.read_text())
    events = events["traceEvents"] if isinstance(events, dict) else events
    assert sum(1 for e in events if e.get("ph") == "X") == 51
    assert "51" in capfd.readouterr().err


def test_dask_config_scheduler() -> None:
    with dask.config.set(scheduler=tessera.get):
        assert da.arange(10, chunks=3).sum().compute() == 45


def _report_data(path: pathlib.Path) -> Any:
    """The JSON a report page carries (the <script id="data"> element)."""
    html = path.read_text()
    start = html.index('<script id="data" type="application/json">') + len('<script id="data" type="application/json">')
    return json.loads(html[start : html.index("</script>", start)])


def test_report_of_a_run_and_of_a_failed_run(tmp_path: pathlib.Path) -> None:
    dsk: dict[Hashable, Any] = {("x", i): (sum, [i, 1]) for i in range(20)}
    dsk["total"] = (sum, [("x", i) for i in range(20)])
    page = tmp_path / "run.html"
    assert tessera.get(dsk, "total", report=str(page)) == sum(range(20)) + 20
    data = _report_data(page)
    assert [run["finished"] for run in data["runs"]] == [21]
    assert data["errors"] == []

    def boom(x: int) -> int:
        raise ValueError("no good")

    dsk["bad"] = (boom, ("x", 3))
    failed = tmp_path / "failed.html"
    with pytest.raises(ValueError, match="no good"):
        tessera.get(dsk, "bad", report=str(failed))
    errors = _report_data(failed)["errors"]
    assert len(errors) == 1 and "bad" in errors[0]["key"] and "no good" in errors[0]["message"]
