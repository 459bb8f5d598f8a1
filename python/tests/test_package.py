"""tessera as a Python package: its namespace, errors, version, dask's scheduler name
and configuration keys, output through sys.stderr, `python -m tessera`, docstrings."""
import builtins
import inspect
import operator
import pathlib
import re
import subprocess
import sys
import threading
import types
from typing import Any

import dask
import dask.array as da
import pytest
from dask.diagnostics import Profiler

import tessera
import tessera.array as ta

SOURCE_ROOT = pathlib.Path(__file__).resolve().parents[2]


def test_star_import_leaves_every_builtin_alone() -> None:
    namespace: dict[str, Any] = {}
    exec("from tessera import *", namespace)
    shadowed = sorted(set(namespace) & set(dir(builtins)) - {"__builtins__"})
    assert shadowed == []
    exec("try:\n    int('x')\nexcept ValueError:\n    caught = True", namespace)
    assert namespace["caught"]


def test_all_holds_tesseras_own_names() -> None:
    assert sorted(tessera.__all__) == sorted([
        "get", "order", "cull", "fuse", "rechunk", "register", "array", "Error", "ChunkError", "StorageError",
        "Cancelled", "TaskError", "MemoryLimitError", "InvalidTypeError", "InvalidValueError"])
    for name in tessera.__all__:
        assert getattr(tessera, name) is not None


@pytest.mark.parametrize("name, builtin", [("ChunkError", ValueError), ("InvalidValueError", ValueError),
                                           ("InvalidTypeError", TypeError), ("MemoryLimitError", MemoryError),
                                           ("StorageError", None), ("Cancelled", None), ("TaskError", None)])
def test_errors_are_tessera_errors_and_the_matching_builtin(name: str, builtin: type | None) -> None:
    cls = getattr(tessera, name)
    assert issubclass(cls, tessera.Error)
    if builtin is not None:
        assert issubclass(cls, builtin)


def test_former_error_names_stay_attributes() -> None:
    assert tessera.ValueError is tessera.InvalidValueError
    assert tessera.TypeError is tessera.InvalidTypeError
    assert "ValueError" not in tessera.__all__ and "TypeError" not in tessera.__all__


def test_every_public_class_names_its_public_module() -> None:
    classes = [getattr(tessera, n) for n in tessera.__all__ if inspect.isclass(getattr(tessera, n))]
    assert len(classes) == 8
    assert [c for c in classes if c.__module__ != "tessera"] == []
    assert repr(tessera.MemoryLimitError("x")) == "MemoryLimitError('x')"
    error = tessera.MemoryLimitError
    assert f"{error.__module__}.{error.__qualname__}" == "tessera.MemoryLimitError"
    assert ta.Array.__module__ == "tessera.array"


def test_version_is_the_meson_project_version() -> None:
    meson_build = (SOURCE_ROOT / "meson.build").read_text()
    found = re.search(r"project\('tessera'.*?version: '([^']+)'", meson_build, re.S)
    assert found is not None and tessera.__version__ == found.group(1)


def test_acceptance_sum_by_scheduler_name() -> None:
    assert da.ones((1000, 1000), chunks=100).sum().compute(scheduler="tessera") == 1000000.0


def test_scheduler_name_in_dask_config_and_register() -> None:
    with dask.config.set(scheduler="tessera"):
        assert da.arange(10, chunks=3).sum().compute() == 45
    tessera.register("tessera-test-name")
    try:
        assert da.arange(10, chunks=3).sum().compute(scheduler="tessera-test-name") == 45
    finally:
        del dask.base.named_schedulers["tessera-test-name"]


def test_dask_config_keys_reach_the_run(monkeypatch: pytest.MonkeyPatch, tmp_path: pathlib.Path) -> None:
    seen: dict[str, Any] = {}
    real_run = tessera._get._tessera._run  # type: ignore[attr-defined]  # private: not in the stubs

    def run(*args: Any, **kwargs: Any) -> Any:
        seen.update(num_workers=args[2], spill_dir=args[4], limited=args[3] is not None)
        return real_run(*args, **kwargs)

    monkeypatch.setattr(tessera._get._tessera, "_run", run)  # type: ignore[attr-defined]
    config = {"num_workers": 3, "tessera.memory-limit": "64GiB", "tessera.spill-dir": str(tmp_path)}
    with dask.config.set(config):
        assert tessera.get({"a": (operator.add, 1, 2)}, "a") == 3
    assert seen == {"num_workers": 3, "spill_dir": str(tmp_path), "limited": True}
    with dask.config.set(config):  # an argument wins over dask's setting
        assert tessera.get({"a": (operator.add, 1, 2)}, "a", num_workers=1, spill_dir="x", memory_limit=0) == 3
    assert seen == {"num_workers": 1, "spill_dir": "x", "limited": False}


def test_dask_memory_limit_key_is_a_limit() -> None:
    with dask.config.set({"tessera.memory-limit": "8MiB"}):
        with pytest.raises(tessera.MemoryLimitError, match=r"memory_limit of 8\.0 MiB is no more than"):
            tessera.get({"a": (operator.add, 1, 2)}, "a")


def test_progress_goes_through_sys_stderr(capsys: pytest.CaptureFixture[str]) -> None:
    dsk: dict[object, object] = {("x", i): (sum, [i, 1]) for i in range(20)}
    dsk["total"] = (sum, [("x", i) for i in range(20)])
    assert tessera.get(dsk, "total", progress=True) == sum(range(20)) + 20
    # capsys replaces sys.stderr alone: what went to file descriptor 2 is not here.
    assert "100% Completed | 21/21 tasks" in capsys.readouterr().err


def test_profiler_worker_ids_are_the_worker_threads_ids() -> None:
    threads: set[int] = set()

    def work(i: int) -> int:
        threads.add(threading.get_ident())
        return i

    dsk = {("x", i): (work, i) for i in range(40)}
    with Profiler() as prof:  # type: ignore[no-untyped-call]  # dask's Profiler is unannotated
        tessera.get(dsk, [("x", i) for i in range(40)], num_workers=2)
    assert {r.worker_id for r in prof.results} == threads


def test_python_m_tessera_runs_the_command() -> None:
    done = subprocess.run([sys.executable, "-m", "tessera", "--help"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "rechunk" in done.stdout
    bad = subprocess.run([sys.executable, "-m", "tessera", "no-such-command"], capture_output=True, text=True,
                         timeout=60)
    assert bad.returncode != 0 and "no-such-command" in bad.stderr


def _public(module: types.ModuleType) -> list[tuple[str, object]]:
    return [(f"{module.__name__}.{n}", getattr(module, n)) for n in module.__all__]


def test_every_public_name_has_a_docstring() -> None:
    names = _public(tessera) + _public(ta)
    names += [(f"tessera.array.Array.{n}", getattr(ta.Array, n)) for n in dir(ta.Array) if not n.startswith("_")]
    assert [n for n, obj in names if not (inspect.getdoc(obj) or "").strip()] == []
    for name in ["get", "rechunk", "register"]:
        doc = inspect.getdoc(getattr(tessera, name)) or ""
        assert "Example" in doc and "Returns" in doc, name
