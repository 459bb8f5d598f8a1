"""tessera.get under faults a hostile user meets (issue 42): deep C recursion in a
task, Ctrl-C during long tasks, results the spiller cannot handle, bad arguments.

What could crash or hang the interpreter runs in a child process, so that a
segfault or a hang fails one test instead of ending pytest."""
import os
import pathlib
import signal
import subprocess
import sys
import textwrap
from collections.abc import Callable, Hashable
from typing import IO, Any

import pytest


def _child(code: str, **kwargs: Any) -> subprocess.Popen[str]:
    """A Python child running `code` with the module under test on its path."""
    return subprocess.Popen([sys.executable, "-c", textwrap.dedent(code)], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, env=dict(os.environ), **kwargs)


# A task pickling a 35,000-deep list recurses in C about 35,000 frames deep:
# more than oneTBB's default 4 MiB stack holds, less than a Python thread's 8 MiB.
_DEEP_PICKLE = """
    import pickle, sys, time, tessera
    sys.setrecursionlimit(100000)

    def body(i):
        time.sleep(0.05)  # so that both threads take tasks
        x = []
        for _ in range(35000):
            x = [x]
        return len(pickle.dumps(x))

    dsk = {("deep", i): (body, i) for i in range(6)}
    print(sorted(set(tessera.get(dsk, list(dsk), num_workers=2))))
"""


def test_deep_c_recursion_in_a_task_runs_on_worker_threads() -> None:
    p = _child(_DEEP_PICKLE)
    out, err = p.communicate(timeout=120)
    assert p.returncode == 0, f"exit status {p.returncode}: {err[-2000:]}"
    assert out.strip() == "[105023]"


def test_worker_stack_follows_threading_stack_size_and_environment() -> None:
    from tessera import _get

    import threading

    assert _get._worker_stack() >= 8 << 20  # type: ignore[no-untyped-call]  # tessera._get is unannotated
    old = threading.stack_size(64 << 20)
    try:
        assert _get._worker_stack() == 64 << 20  # type: ignore[no-untyped-call]
    finally:
        threading.stack_size(old)
    os.environ["TESSERA_WORKER_STACK"] = "128MiB"
    try:
        assert _get._worker_stack() == 128 << 20  # type: ignore[no-untyped-call]
        os.environ["TESSERA_WORKER_STACK"] = "lots"
        with pytest.raises(ValueError, match="TESSERA_WORKER_STACK='lots': expected a size in bytes"):
            _get._worker_stack()  # type: ignore[no-untyped-call]
    finally:
        del os.environ["TESSERA_WORKER_STACK"]


# Two tasks that sleep for a minute on two workers; Ctrl-C comes once both started.
_SLEEPERS = """
    import sys, time, tessera

    def slow(i):
        sys.stdout.write("started\\n")  # one write: two threads' print() may interleave
        sys.stdout.flush()
        time.sleep(60)
        return i

    try:
        tessera.get({("slow", i): (slow, i) for i in range(2)}, [("slow", 0), ("slow", 1)], num_workers=2)
    except KeyboardInterrupt:
        print("interrupted", flush=True)
    print("after", flush=True)
"""


class _Lines:
    """The lines a child writes to `stream`, read by a thread of their own, so
    that waiting for one has a deadline."""

    def __init__(self, stream: IO[str]) -> None:
        import queue
        import threading

        self.lines: queue.Queue[str] = queue.Queue()

        def read() -> None:
            for line in stream:
                self.lines.put(line.rstrip("\n"))

        threading.Thread(target=read, daemon=True).start()

    def until(self, wanted: str, deadline_s: float) -> list[str]:
        """Lines up to the first that holds `wanted`; fails past `deadline_s` seconds."""
        import queue
        import time

        seen: list[str] = []
        end = time.monotonic() + deadline_s
        while (left := end - time.monotonic()) > 0:
            try:
                seen.append(self.lines.get(timeout=left))
            except queue.Empty:
                break
            if wanted in seen[-1]:
                return seen
        pytest.fail(f"no {wanted!r} within {deadline_s} s; read {seen}")


def test_ctrl_c_raises_at_once_and_a_second_one_ends_the_process() -> None:
    p = _child(_SLEEPERS)
    assert p.stdout is not None and p.stderr is not None
    out, err = _Lines(p.stdout), _Lines(p.stderr)
    try:
        out.until("started", 60)
        out.until("started", 60)
        p.send_signal(signal.SIGINT)
        # Well below the tasks' minute: the caller did not wait for them.
        assert out.until("interrupted", 10) == ["interrupted"]
        out.until("after", 10)
        # At exit the interpreter waits for the running tasks, as it would for dask's
        # pool; a second Ctrl-C ends the process.
        err.until("Ctrl-C again to quit", 10)
        p.send_signal(signal.SIGINT)
        assert p.wait(timeout=10) == -signal.SIGINT
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_tasks_left_running_at_ctrl_c_finish_before_the_interpreter_exits() -> None:
    code = _SLEEPERS.replace("time.sleep(60)", "time.sleep(3)").replace("return i", "sys.stdout.write('returned\\n')")
    p = _child(code)
    assert p.stdout is not None and p.stderr is not None
    out, err = _Lines(p.stdout), _Lines(p.stderr)
    try:
        out.until("started", 60)
        out.until("started", 60)
        p.send_signal(signal.SIGINT)
        assert out.until("returned", 60) == ["interrupted", "after", "returned"]
        out.until("returned", 10)
        assert p.wait(timeout=10) == 0
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()


def test_spilled_numpy_results_come_back_writable_with_their_flags(tmp_path: pathlib.Path) -> None:
    # 24 blocks of 8 MiB, each summed, then each read again once the mean of the
    # sums is known (48 MiB of room: most spill in between) by a task that writes
    # into it, as `a += 1` on an input does. Half are Fortran-ordered. A block
    # comes back as an array of its own type and flags, writable.
    import numpy as np
    import numpy.typing as npt
    import tessera
    from dask.callbacks import Callback
    from tessera import _get

    n = 24

    def block(i: int) -> npt.NDArray[np.float64]:
        a = np.full((1024, 1024), float(i))
        return np.asfortranarray(a) if i % 2 else a

    def bump(a: npt.NDArray[np.float64], _: float, i: int) -> tuple[tuple[str, bool, bool, bool], bool]:
        flags = (type(a).__name__, a.flags.writeable, a.flags.c_contiguous, a.flags.f_contiguous)
        a += 1
        return flags, float(a[0, 0]) == i + 1

    dsk: dict[Hashable, Any] = {}
    for i in range(n):
        dsk[("a", i)] = (block, i)
        dsk[("s", i)] = (np.sum, ("a", i))
        dsk[("b", i)] = (bump, ("a", i), "mean", i)
    dsk["mean"] = (lambda *s: sum(s), *[("s", i) for i in range(n)])
    spilled: list[pathlib.Path] = []

    def posttask(key: Hashable, result: object, dsk: dict[Hashable, Any], state: dict[str, Any],
                 worker_id: int) -> None:
        if key == "mean":  # every block held: most are in the scratch folder
            spilled.extend(f for d in tmp_path.iterdir() for f in d.iterdir())

    limit = _get._tessera._resident_bytes() + (48 << 20)  # type: ignore[attr-defined]  # private: not in the stubs
    with Callback(posttask=posttask):  # type: ignore[no-untyped-call]  # dask's Callback is unannotated
        got = tessera.get(dsk, [("b", i) for i in range(n)], memory_limit=limit, spill_dir=str(tmp_path),
                          num_workers=2)
    assert len(spilled) >= n // 2
    assert [g[1] for g in got] == [True] * n
    assert [g[0] for g in got] == [("ndarray", True, i % 2 == 0, i % 2 == 1) for i in range(n)]


class _Sized:
    """An object whose __sizeof__ gives `size`, or raises when `size` is an exception."""

    def __init__(self, size: int | Exception) -> None:
        self.size = size

    def __sizeof__(self) -> int:
        if isinstance(self.size, Exception):
            raise self.size
        return self.size


def _deep_list(depth: int) -> list[Any]:
    x: list[Any] = []
    for _ in range(depth):
        x = [x]
    return x


def _self_containing() -> list[Any]:
    x: list[Any] = [1]
    x.append(x)
    return x


@pytest.mark.parametrize("make, kind, why", [
    (lambda: _Sized(RuntimeError("sizeof boom")), "_Sized", "RuntimeError: sizeof boom"),
    (lambda: _Sized(-5), "_Sized", "should return >= 0"),
    (lambda: _Sized(2**70), "_Sized", "OverflowError"),
    (lambda: _Sized(2**61), "_Sized", "sizeof gave 23058430092136939"),
    (lambda: _deep_list(100_000), "list", "RecursionError"),
    (_self_containing, "list", "RecursionError"),
])
def test_a_result_that_cannot_be_sized_stays_in_memory_with_a_warning(make: Callable[[], object], kind: str,
                                                                      why: str) -> None:
    import tessera

    dsk: dict[Hashable, Any] = {"bad": (make,), "out": (lambda x: type(x).__name__, "bad")}
    with pytest.warns(RuntimeWarning) as caught:
        got = tessera.get(dsk, "out", memory_limit="16GiB")
    assert got == kind
    messages = [str(w.message) for w in caught if "tessera" in str(w.message)]
    assert len(messages) == 1, messages
    assert messages[0].startswith("tessera: cannot size the result of 'bad' (")
    assert why in messages[0] and "it stays in memory and never spills" in messages[0]


def test_a_result_pickle_refuses_stays_in_memory_with_one_warning(tmp_path: pathlib.Path) -> None:
    # 8 results of 8 MiB that hold a lock (pickle refuses them) and 8 plain ones,
    # all held until "all" ran, under a limit that holds them all only if nothing
    # spills: the spiller tries them, warns once per key, and keeps them.
    import threading

    import numpy as np
    import tessera
    from tessera import _get

    n = 8
    dsk: dict[Hashable, Any] = {}
    for i in range(n):
        dsk[("locked", i)] = (lambda i: (threading.Lock(), np.full(1 << 20, float(i))), i)
        dsk[("plain", i)] = (lambda i: np.full(1 << 20, float(i)), i)
    keys = [("locked", i) for i in range(n)] + [("plain", i) for i in range(n)]
    dsk["all"] = (lambda *xs: len(xs), *keys)
    for k in keys:
        dsk[("sum",) + k] = (lambda x, _: float(np.sum(x[1] if isinstance(x, tuple) else x)), k, "all")
    limit = _get._tessera._resident_bytes() + (150 << 20)  # type: ignore[attr-defined]  # private: not in the stubs
    with pytest.warns(RuntimeWarning) as caught:
        got = tessera.get(dsk, [("sum",) + k for k in keys], memory_limit=limit, spill_dir=str(tmp_path),
                          num_workers=2)
    assert got == tuple(float(i << 20) for i in range(n)) * 2
    messages = sorted(str(w.message) for w in caught if "cannot spill" in str(w.message))
    assert messages, "the spiller never tried a locked result"
    assert len(set(messages)) == len(messages)  # one warning per key
    for m in messages:
        assert m.startswith("tessera: the result of ('locked', ")
        assert m.endswith("cannot spill (TypeError: cannot pickle '_thread.lock' object); it stays in memory")
    assert os.listdir(tmp_path) == []


@pytest.mark.parametrize("kwargs, error, message", [
    ({"memory_limit": -1}, ValueError, "memory_limit=-1: expected bytes as an int or float >= 0 or a string"),
    ({"memory_limit": True}, TypeError, "memory_limit=True: expected bytes .* found bool"),
    ({"memory_limit": float("nan")}, ValueError, "memory_limit=nan: expected bytes"),
    ({"memory_limit": "lots"}, ValueError, "memory_limit='lots': expected bytes .* or a string such as '2GiB'"),
    ({"memory_limit": [1]}, TypeError, r"memory_limit=\[1\]: expected bytes .* found list"),
    ({"num_workers": 2**31}, ValueError, r"num_workers=2147483648: expected 0 \(every core\) or a count of threads "
                                         r"from 1 to 2\*\*31-1"),
    ({"num_workers": -1}, ValueError, "num_workers=-1: expected 0"),
    ({"num_workers": True}, TypeError, "num_workers=True: expected an int, 0 for every core, found bool"),
    ({"num_workers": 2.5}, TypeError, "num_workers=2.5: expected an int, 0 for every core, found float"),
])
def test_bad_arguments_name_the_argument_the_value_and_what_is_accepted(kwargs: dict[str, object],
                                                                        error: type[Exception], message: str) -> None:
    import tessera

    with pytest.raises(error, match=message):
        tessera.get({"a": (abs, -1)}, "a", **kwargs)  # type: ignore[arg-type]  # the wrong types on purpose


@pytest.mark.parametrize("where", ["folder", "missing parent", "read-only folder"])
def test_a_report_path_that_cannot_be_written_is_refused_before_the_run(tmp_path: pathlib.Path, where: str) -> None:
    import tessera

    ran: list[int] = []
    if where == "folder":
        path = tmp_path
    elif where == "missing parent":
        path = tmp_path / "no" / "r.html"
    else:
        if os.geteuid() == 0:
            pytest.skip("root writes into a read-only folder")
        (tmp_path / "ro").mkdir(mode=0o500)
        path = tmp_path / "ro" / "r.html"
    with pytest.raises(tessera.StorageError, match=str(path)):
        tessera.get({"a": (ran.append, 1)}, "a", report=str(path))
    assert ran == []


def test_a_report_that_fails_at_the_end_keeps_the_result_and_the_runs_own_error(tmp_path: pathlib.Path) -> None:
    # The folder goes away while the run runs: the write at the end fails.
    import shutil

    import tessera

    folder = tmp_path / "reports"
    folder.mkdir()
    report = str(folder / "r.html")
    with pytest.warns(RuntimeWarning, match="tessera: the report was not written: "):
        assert tessera.get({"a": (shutil.rmtree, str(folder)), "b": (lambda _: 42, "a")}, "b", report=report) == 42

    def fail(_: object) -> None:
        raise KeyError("the run's own")

    folder.mkdir()
    with pytest.warns(RuntimeWarning, match="the report was not written"):
        with pytest.raises(KeyError, match="the run's own"):
            tessera.get({"a": (shutil.rmtree, str(folder)), "b": (fail, "a")}, "b", report=report)


def test_a_store_declaring_too_many_chunks_to_read_is_refused_at_once(tmp_path: pathlib.Path) -> None:
    # 65536 x 32768 chunks of one byte (2^31, 2 GiB), none written: the read tasks
    # fit any budget, but reading is a file lookup per chunk, most of an hour.
    # Refused before any task; in a child, so that a missing check fails on the
    # timeout instead of running for an hour.
    import json

    src = tmp_path / "many.zarr"
    src.mkdir()
    (src / ".zarray").write_text(json.dumps({
        "zarr_format": 2, "shape": [65536, 32768], "chunks": [1, 1], "dtype": "|u1", "compressor": None,
        "fill_value": 0, "order": "C", "filters": None}))
    p = _child(f"""
        import tessera
        try:
            tessera.rechunk({str(src)!r}, {str(tmp_path / "out.zarr")!r}, chunks=(2048, 2048), progress=False)
        except tessera.ChunkError as e:
            print(e)
    """)
    try:
        out, err = p.communicate(timeout=60)
    finally:
        p.kill()
    assert p.returncode == 0, err
    assert out.startswith(f"{src}: its 2147483648 chunks of (1, 1) are more than the 33554432 (2^25) a rechunk "
                          "reads in a sane time"), out
    assert not (tmp_path / "out.zarr").exists()
