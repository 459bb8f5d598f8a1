"""tessera.get's own behaviour: errors, Ctrl-C, the memory limit, concurrent calls."""
import operator
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
import threading
import time
import traceback
import types
from collections.abc import Hashable, Sequence
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest

import tessera

HERE = os.path.dirname(os.path.abspath(__file__))


def fail(x: object) -> None:
    raise ZeroDivisionError(f"no division of {x}")


def test_task_exception_is_the_original_with_its_traceback() -> None:
    dsk = {"a": 1, "b": (fail, "a"), "c": (operator.add, "b", 1)}
    with pytest.raises(ZeroDivisionError, match="no division of 1") as info:
        tessera.get(dsk, "c")
    frames = [f.name for f in traceback.extract_tb(info.value.__traceback__)]
    assert "fail" in frames


def test_raise_exception_receives_the_exception_and_traceback() -> None:
    seen: list[tuple[type[BaseException], bool]] = []

    def raise_exception(exc: BaseException, tb: types.TracebackType | None) -> None:
        seen.append((type(exc), tb is not None))
        raise RuntimeError("wrapped") from exc

    with pytest.raises(RuntimeError, match="wrapped"):
        tessera.get({"a": (fail, 2)}, "a", raise_exception=raise_exception)
    assert seen == [(ZeroDivisionError, True)]


def test_missing_key_is_a_key_error() -> None:
    with pytest.raises(KeyError, match="nope"):
        tessera.get({"a": 1}, ["a", ["nope"]])


def test_cycle_is_an_error_naming_it() -> None:
    dsk = {"a": (operator.neg, "b"), "b": (operator.neg, "a"), "c": (operator.neg, "a")}
    with pytest.raises(RuntimeError, match="Cycle detected"):
        tessera.get(dsk, "c")


def test_nesting_past_the_limit_is_refused() -> None:
    task: object = 1
    for _ in range(1100):
        task = (operator.neg, task)
    with pytest.raises(ValueError, match="nests tasks and lists more than 1000 levels"):
        tessera.get({"deep": task}, "deep")


def _resident() -> int:
    return int(open("/proc/self/statm").read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def test_memory_limit_error_names_the_task() -> None:
    dsk = {"big": (np.ones, 4 << 20)}  # 32 MiB
    with pytest.raises(tessera.MemoryLimitError, match="big"):
        tessera.get(dsk, "big", memory_limit=_resident() + (8 << 20))


def test_memory_limit_below_the_process_at_the_start_is_an_error() -> None:
    # The limit bounds the process: what it holds at the start counts against it.
    start = _resident()
    with pytest.raises(tessera.MemoryLimitError,
                       match=r"memory_limit of 8\.0 MiB is no more than the [0-9.]+ MiB the process holds at the start"):
        tessera.get({"a": (operator.add, 1, 2)}, "a", memory_limit="8MiB")
    assert start > 8 << 20


def test_keys_of_any_hashable_kind() -> None:
    key = frozenset({1, 2})
    dsk = {key: 5, 3.5: (operator.add, key, 1), ("t", 1.5): (operator.mul, 3.5, 2), ("x", 0, 1): ("t", 1.5)}
    assert tessera.get(dsk, [("x", 0, 1), 3.5]) == (12, 6)


def test_two_threads_at_once() -> None:
    def graph(offset: int) -> dict[Hashable, Any]:
        dsk: dict[Hashable, Any] = {("x", i): (operator.add, i, offset) for i in range(200)}
        dsk["total"] = (sum, [("x", i) for i in range(200)])
        dsk["slow"] = (time.sleep, 0.2)
        dsk["out"] = (lambda t, s: t, "total", "slow")
        return dsk

    results: dict[int, int] = {}

    def run(offset: int) -> None:
        results[offset] = tessera.get(graph(offset), "out", num_workers=2)

    threads = [threading.Thread(target=run, args=(o,)) for o in (0, 1000)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == {0: sum(range(200)), 1000: sum(range(200)) + 200 * 1000}


def _python(code: str, **kwargs: Any) -> subprocess.Popen[bytes]:
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(sys.path))
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], env=env, **kwargs)


def test_a_process_exits_cleanly_right_after_a_run() -> None:
    # The scheduler's worker threads keep a Python thread state between task bodies and
    # end as the interpreter finalizes: a thread that waited for the GIL to delete its
    # thread state then was ended by Python inside its exit handlers (std::terminate,
    # about 1 run in 20). Each run must exit with status 0.
    code = """
        import operator, tessera
        dsk = {("a", i): (operator.add, i, 1) for i in range(2000)}
        dsk["s"] = (sum, [("a", i) for i in range(2000)])
        assert tessera.get(dsk, "s", num_workers=2) == sum(range(2000)) + 2000
    """
    for _ in range(40):
        proc = _python(code, stderr=subprocess.PIPE)
        _, err = proc.communicate(timeout=60)
        assert proc.returncode == 0, err[-500:].decode()


def test_ctrl_c_cancels_the_run_and_removes_scratch(tmp_path: pathlib.Path) -> None:
    # A chain of slow tasks whose 8 MiB results spill under a 16 MiB limit.
    code = f"""
        import time, numpy as np, tessera
        def step(x, i):
            time.sleep(0.05)
            return np.full(1 << 20, float(i)) + x[:1]
        dsk = {{("s", 0): (np.zeros, 1 << 20)}}
        for i in range(1, 2000):
            dsk[("s", i)] = (step, ("s", i - 1), i)
        dsk["all"] = (sum, [(lambda a: a[0], ("s", i)) for i in range(2000)])
        limit = int(open("/proc/self/statm").read().split()[1]) * 4096 + (32 << 20)  # the results get ~24 MiB
        tessera.get(dsk, ["all", [("s", i) for i in range(0, 2000, 10)]], memory_limit=limit, spill_dir={str(tmp_path)!r})
        print("finished")
    """
    p = _python(code, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.time() + 60
    while time.time() < deadline and not any(n.startswith("tessera-spill-") for n in os.listdir(tmp_path)):
        time.sleep(0.05)
    assert any(n.startswith("tessera-spill-") for n in os.listdir(tmp_path)), "the run never spilled"
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert p.returncode != 0
    assert b"KeyboardInterrupt" in err
    assert b"finished" not in out
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("callback", [False, True])
def test_memory_limit_keeps_peak_rss_and_the_result(tmp_path: pathlib.Path, callback: bool) -> None:
    # 32 blocks of 16 MiB read twice: by a mean over all of them, then each with
    # that mean. Without a limit every block is held between the two passes
    # (512 MiB, 4x the limit); with it they spill and come back. With a dask
    # callback too: its state must not keep the results the run spilled.
    code = f"""
        import resource, numpy as np, tessera
        from dask.callbacks import Callback
        if {callback}:
            Callback(posttask=lambda *a: None).register()
        n, size, limit = 32, 2 << 20, 128 << 20
        def rss():
            return int(open("/proc/self/statm").read().split()[1]) * 4096
        dsk = {{}}
        for i in range(n):
            dsk[("a", i)] = (np.full, size, float(i))
            dsk[("s", i)] = (np.sum, ("a", i))
        dsk["mean"] = (lambda *s: sum(s) / (n * size), *[("s", i) for i in range(n)])
        for i in range(n):
            dsk[("c", i)] = (lambda a, m: float(np.abs(a - m).sum()), ("a", i), "mean")
        dsk["total"] = (sum, [("c", i) for i in range(n)])
        base = rss()
        got = tessera.get(dsk, "total", memory_limit=limit, spill_dir={str(tmp_path)!r}, num_workers=2)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        m = (n - 1) / 2
        print(got == float(sum(abs(i - m) * size for i in range(n))), peak - base, limit)
    """
    _check_within_limit(code, tmp_path, "MiB above the start")


def _check_within_limit(code: str, scratch: pathlib.Path, what: str) -> None:
    """Runs `code`, which prints: whether its result was right, the bytes it
    measured, and its memory limit; checks them (bytes <= limit + 10% + 100 MiB)
    and that the scratch folder is empty."""
    p = _python(code, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=300)
    assert p.returncode == 0, err.decode()
    equal, measured, limit = out.split()
    assert equal == b"True"
    assert int(measured) <= int(limit) * 1.1 + (100 << 20), (int(measured) >> 20, what)
    assert os.listdir(scratch) == []


def test_memory_limit_counts_what_views_keep_alive(tmp_path: pathlib.Path) -> None:
    # Each task returns x[::8] of a 32 MiB block: a 4 MiB view that keeps the
    # whole block alive. The last task reads all 32 views at once: dask.sizeof
    # counts them at 128 MiB, under the limit, while they keep 1 GiB (4x the
    # limit) alive. The whole process's peak RSS must stay within the limit
    # (+10% + 100 MiB), the result equal.
    code = f"""
        import resource, numpy as np, tessera
        n, size, limit = 32, 4 << 20, 256 << 20
        dsk = {{}}
        for i in range(n):
            dsk[("a", i)] = (np.full, size, float(i))
            dsk[("v", i)] = (lambda a: a[::8], ("a", i))
        dsk["total"] = (lambda *vs: sum(float(v.sum()) for v in vs), *[("v", i) for i in range(n)])
        got = tessera.get(dsk, "total", memory_limit=limit, spill_dir={str(tmp_path)!r}, num_workers=2)
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
        print(got == float(sum(i * size // 8 for i in range(n))), peak, limit)
    """
    _check_within_limit(code, tmp_path, "MiB peak RSS")


def test_key_indices_equal_as_dict_keys_are_one_key() -> None:
    # dask.array's graphs mix ('x', np.int64(0)) keys with ('x', 0) references.
    dsk = {("x", np.int64(0)): 2, ("y", 0.0): (operator.neg, ("x", 0)), "z": (operator.add, ("y", np.int32(0)), 1)}
    assert tessera.get(dsk, "z") == -1


def test_rerun_exceptions_locally_raises_the_original() -> None:
    runs: list[int] = []

    def flaky(x: int) -> None:
        runs.append(x)
        raise KeyError("flaky")

    with pytest.raises(KeyError, match="flaky"):
        tessera.get({"a": 1, "b": (flaky, "a")}, "b", rerun_exceptions_locally=True)
    assert runs == [1, 1]  # the run, then the rerun


def _subgraph(dsk: dict[Hashable, Any], outkey: Hashable, inkeys: Sequence[Hashable]) -> Any:
    from dask.optimization import SubgraphCallable

    return SubgraphCallable(dsk, outkey, tuple(inkeys), name="sg")


def test_subgraph_callable_runs_compiled_not_through_its_call(monkeypatch: pytest.MonkeyPatch) -> None:
    # dask.array's blockwise tasks call a SubgraphCallable (dask.core.get over a small
    # graph per call); tessera compiles its inner graph into the task instead.
    from dask.local import get_sync
    from dask.optimization import SubgraphCallable

    inner = _subgraph({"y": (operator.add, "x", 10), "z": (operator.mul, "y", "k"), "out": (tuple, ["z", "y", "x"])},
                      "out", ["x", "k"])
    dsk = {"a": 1, "b": (inner, "a", 3), "c": (inner, (operator.add, "a", 1), 2)}
    expected = get_sync(dsk, ["b", "c"])
    assert expected == ((33, 11, 1), (24, 12, 2))

    def refuse(self: object, *args: object) -> None:
        raise AssertionError("SubgraphCallable.__call__ was called")

    monkeypatch.setattr(SubgraphCallable, "__call__", refuse)
    assert tessera.get(dsk, ["b", "c"], num_workers=2) == expected


def test_subgraph_callable_keeps_dask_core_get_semantics() -> None:
    from dask.local import get_sync

    calls: list[int] = []

    def record(x: int) -> int:
        calls.append(x)
        return x

    # A repeated inkey binds its last argument (dict(zip(...))); an inner key that is
    # also an inkey is recomputed; every inner key runs, needed or not; literals that
    # are not inner keys pass as they are; a SubgraphCallable nests in another.
    nested = _subgraph({"n": (operator.add, "p", 100)}, "n", ["p"])
    inner = _subgraph({"x": (operator.neg, "x2"), "unused": (record, "x"), "out": [(nested, "x"), "x", "lit", "x2"]},
                      "out", ["x2", "x", "x2"])
    dsk = {"a": 5, "b": (inner, "a", 7, 9)}
    expected = get_sync(dsk, "b")
    assert expected == [91, -9, "lit", 9] and calls == [-9]
    calls.clear()
    assert tessera.get(dsk, "b") == expected
    assert calls == [-9]


def test_subgraph_callable_errors_are_dasks() -> None:
    inner = _subgraph({"y": (fail, "x")}, "y", ["x"])
    with pytest.raises(ZeroDivisionError, match="no division of 4"):
        tessera.get({"a": 4, "b": (inner, "a")}, "b")
    # The wrong number of arguments and a cycle inside raise what the callable itself raises.
    two = _subgraph({"y": (operator.add, "x", "w")}, "y", ["x", "w"])
    with pytest.raises(ValueError, match="Expected 2 args, got 1"):
        tessera.get({"a": 4, "b": (two, "a")}, "b")
    cyclic = _subgraph({"y": (operator.neg, "z"), "z": (operator.neg, "y")}, "y", ["x"])
    with pytest.raises(RuntimeError, match="Cycle detected"):
        tessera.get({"a": 4, "b": (cyclic, "a")}, "b")


def test_inputs_dropped_during_the_run_are_freed_when_it_returns() -> None:
    import weakref

    class Box:
        pass

    made: list[weakref.ref[Box]] = []

    def make(i: int) -> Box:
        b = Box()
        made.append(weakref.ref(b))
        return b

    dsk: dict[Hashable, Any] = {("m", i): (make, i) for i in range(50)}
    dsk["n"] = (len, [("m", i) for i in range(50)])
    assert tessera.get(dsk, "n", num_workers=2) == 50
    assert len(made) == 50 and all(r() is None for r in made)


def test_a_large_result_is_freed_when_its_last_reader_is_done() -> None:
    #   big --> read --> both <-- watch
    #   one -----^
    # watch holds one worker from before read runs until read has run, then waits for big
    # to be freed. The other worker ran big and read and has nothing to run until watch
    # returns: a large result must not wait for the next task body to be freed, even
    # without a memory limit. (read reads `one` too, so that big and read are not fused.)
    import weakref

    watching, done = threading.Event(), threading.Event()
    refs: list[weakref.ref[npt.NDArray[np.float64]]] = []

    def make() -> npt.NDArray[np.float64]:
        a = np.ones(1 << 17)  # 1 MiB
        refs.append(weakref.ref(a))
        return a

    def read(a: npt.NDArray[np.float64], one: int) -> int:
        assert watching.wait(10)
        done.set()
        return a.size + one

    def watch() -> bool:
        watching.set()
        assert done.wait(10)
        deadline = time.monotonic() + 5
        while refs[0]() is not None and time.monotonic() < deadline:
            time.sleep(0.001)
        return refs[0]() is None

    dsk = {"big": (make,), "one": (int, "1"), "read": (read, "big", "one"), "watch": (watch,),
           "both": (tuple, ["read", "watch"])}
    assert tessera.get(dsk, "both", num_workers=2) == ((1 << 17) + 1, True)


def test_subgraph_callable_nesting_counts_where_it_is_called() -> None:
    # Compiled once at its first, shallow call site, a deep SubgraphCallable is still
    # refused where it is called deeper than the nesting limit.
    deep: object = "x"
    for _ in range(600):
        deep = (operator.neg, deep)
    inner = _subgraph({"y": deep}, "y", ["x"])
    site: object = (inner, "a")
    for _ in range(500):
        site = (operator.neg, site)
    with pytest.raises(ValueError, match="nests tasks and lists more than 1000 levels deep"):
        tessera.get({"a": 1, "shallow": (inner, "a"), "deep": site}, ["shallow", "deep"])
    assert tessera.get({"a": 1, "shallow": (inner, "a")}, "shallow") == 1
