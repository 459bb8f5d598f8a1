"""tessera.get: dask's scheduler protocol, run by tessera's C++ scheduler.

The graph is converted once into tessera's Graph; the run (cull, order, the LIFO
ready stack, release after the last reader, the memory budget and spilling) is
C++ without the GIL, and only the task bodies run Python. This module does what
is dask's business before and around the run: high-level graphs, dask's
configuration, and dask's callbacks (``dask.callbacks.Callback`` and the
``dask.diagnostics`` classes), which see the ``state`` dict that dask's own
``get_async`` keeps, as far as they read it.
"""
from __future__ import annotations

import sys
import threading
import warnings

from . import _tessera


def _flatten(keys):
    """The keys of a request (a key or nested lists of keys), depth first."""
    from dask.core import flatten

    return list(flatten(keys)) if isinstance(keys, list) else [keys]


def _as_dict(dsk):
    """A plain dict of the graph: a collection's graph, a HighLevelGraph merged once."""
    if hasattr(dsk, "__dask_graph__"):
        dsk = dsk.__dask_graph__()
    if type(dsk) is dict:
        return dsk
    from dask.utils import ensure_dict

    return ensure_dict(dsk)


class _State:
    """dask's get_async ``state`` dict, kept up to date from tessera's hooks for
    dask's callbacks (pretask/posttask run one at a time, under tessera's lock).

    tessera runs only what the request needs and resolves aliases without
    running them, so the state holds the culled graph's tasks. Under a memory
    limit ``state["cache"]`` keeps no results (``keep_results``: False): it would
    hold every result the scheduler spills until its last reader ran (dask's own
    callbacks read the result posttask is given, never that cache)."""

    def __init__(self, dsk, keys, cache, callbacks, keep_results=True):
        from dask.local import start_state_from_dask

        needed = _tessera._cull_dependencies(dsk, keys)
        culled = {k: dsk[k] for k in needed}
        priorities = _tessera._order(culled)
        self.sortkey = priorities.get
        self.state = start_state_from_dask(culled, cache=dict(cache or {}), sortkey=self.sortkey)
        self.dsk = dsk
        self.results = set(_flatten(keys))
        self.keep_results = keep_results
        self.pretask_cbs = [cb[2] for cb in callbacks if cb[2]]
        self.posttask_cbs = [cb[3] for cb in callbacks if cb[3]]

    def pretask(self, key, worker):
        st = self.state
        ready = st["ready"]
        if ready and ready[-1] == key:
            ready.pop()
        elif st["waiting"].pop(key, None) is None:
            try:
                ready.remove(key)
            except ValueError:
                pass
        st["running"].add(key)
        for f in self.pretask_cbs:
            f(key, self.dsk, st)

    def posttask(self, key, result, worker):
        st = self.state
        if self.keep_results:
            st["cache"][key] = result
        waiting = st["waiting"]
        for dep in sorted(st["dependents"].get(key, ()), key=self.sortkey, reverse=True):
            s = waiting.get(dep)
            if s is not None:
                s.discard(key)
                if not s:
                    del waiting[dep]
                    st["ready"].append(dep)
        waiting_data = st["waiting_data"]
        for dep in st["dependencies"].get(key, ()):
            s = waiting_data.get(dep)
            if s is not None:
                s.discard(key)
                if not s:
                    del waiting_data[dep]
            if s is not None and not s and dep not in self.results:
                st["cache"].pop(dep, None)
                st["released"].add(dep)
        st["finished"].add(key)
        st["running"].discard(key)
        # As dask's threaded get: the worker's id is its thread's (what Profiler shows).
        worker_id = threading.get_ident()
        for f in self.posttask_cbs:
            f(key, result, self.dsk, st, worker_id)


def _normalize_callbacks(callbacks):
    from dask.callbacks import normalize_callback

    return [normalize_callback(cb) for cb in callbacks]


def get(
    dsk,
    keys,
    num_workers=None,
    memory_limit=None,
    spill_dir=None,
    callbacks=None,
    cache=None,
    rerun_exceptions_locally=None,
    raise_exception=None,
    progress=False,
    trace=None,
    report=None,
    **kwargs,
):
    """Computes ``keys`` of the dask graph ``dsk`` with tessera's scheduler.

    A drop-in for ``dask.threaded.get``::

        dask.compute(x, scheduler=tessera.get)
        x.compute(scheduler=tessera.get, memory_limit="2GiB")
        with dask.config.set(scheduler=tessera.get): ...

    Parameters
    ----------
    dsk : dict, HighLevelGraph or a dask collection
    keys : a key, or (nested) lists of keys; the result has their shape (tuples)
    num_workers : threads, the caller's included (default: dask's ``num_workers``
        setting, else every core); each thread has a stack of 8 MiB at least, or
        ``threading.stack_size()`` or ``$TESSERA_WORKER_STACK`` when larger
    memory_limit : bytes (int or "2GiB") the process may hold during the run, as
        dask.distributed's worker ``memory_limit``: what it holds at the start (the
        interpreter, its modules, the caller's data) counts against it, and the
        results get the rest, with room kept for each running task's result and
        working memory (three times the largest result so far). Results are sized by
        ``dask.sizeof``; a numpy view of a buffer more than twice its size is held
        as a copy, a larger view counts its buffer. Above the limit results spill
        to ``spill_dir`` (default $TMPDIR) by pickle protocol 5 and come back
        before their reader; ``tessera.MemoryLimitError`` names the task when the
        limit cannot be kept, and says so when the process holds the limit already.
        The limit is this call's: calls at the same time each budget their own
        results against it (docs/scheduler.md, "Per run, not per process").
        Default: dask's ``tessera.memory-limit`` setting, else none
    callbacks : dask callbacks (tuples or ``dask.callbacks.Callback``); default:
        those registered globally (``Callback.active``)
    cache : dict of values to use instead of computing their keys
    rerun_exceptions_locally, raise_exception : as dask's ``get_async``
    spill_dir : the folder spilled results go to (default: dask's
        ``tessera.spill-dir`` setting, else $TMPDIR)
    progress : tessera's progress bar, written to ``sys.stderr``
    trace : a path: write a Chrome trace of the run there (open in ui.perfetto.dev)
    report : a path: write tessera's HTML report of the run there (task stream,
        memory, progress by key group, summary; also when the run fails). A path
        that cannot be written (a folder, a missing or read-only folder) is a
        ``tessera.StorageError`` before the run; one that fails only at the end is
        a RuntimeWarning, and the result (or the run's own error) stands

    Other keyword arguments (``pool``, ``chunksize``, ...) are accepted and ignored.

    Returns
    -------
    The values of ``keys``, in their shape: a value for a key, a tuple for a list.

    Raises
    ------
    KeyError : a key of ``keys`` is not in the graph
    tessera.MemoryLimitError : the run cannot stay under ``memory_limit``
    RuntimeError : a cycle in the graph ("Cycle detected", as dask says)
    Exception : a task's own exception, with its traceback, as dask raises it

    dask's callbacks see the tasks tessera runs: aliases (a key whose task is
    another key) are resolved without running, so ``Profiler`` shows fewer tasks
    than under ``dask.threaded.get``; its worker ids are the worker threads' ids.

    Example
    -------
    >>> import dask.array as da, tessera
    >>> float(da.ones((100, 100), chunks=10).sum().compute(scheduler=tessera.get))
    10000.0
    """
    import dask
    from dask.callbacks import local_callbacks

    dsk = _as_dict(dsk)
    if num_workers is None:
        num_workers = dask.config.get("num_workers", None) or 0
    if memory_limit is None:
        memory_limit = dask.config.get("tessera.memory-limit", None)
    if spill_dir is None:
        spill_dir = dask.config.get("tessera.spill-dir", None)
    num_workers = _check_workers(num_workers)
    memory_limit = _check_memory_limit(memory_limit)
    results_limit = None
    if memory_limit:
        _results_limit(memory_limit)  # a limit the process holds already fails here, before any callback

        def results_limit():
            # Measured again once the graph is converted: the converted graph stays
            # for the whole run (tens of MiB for a graph of 100,000 tasks).
            return _results_limit(memory_limit)

    if rerun_exceptions_locally is None:
        rerun_exceptions_locally = dask.config.get("rerun_exceptions_locally", False)
    if cache is None:
        cache = dask.config.get("cache", None)
    for k in _flatten(keys):
        if k not in dsk and not (cache is not None and k in cache):
            raise KeyError(k)
    if cache is not None:
        # As in dask's get_async, the graph's data lands in the given cache.
        from dask.core import has_tasks

        for k, v in dsk.items():
            if k not in cache and not has_tasks(dsk, v):
                cache[k] = v

    with local_callbacks(callbacks) as cbs:
        cbs = _normalize_callbacks(cbs)
        if cbs:
            dsk = dict(dsk)  # a start callback may change the graph (dask.cache.Cache does)
        started = []
        state = {}
        succeeded = False
        try:
            for cb in cbs:
                if cb[0]:
                    cb[0](dsk)
                started.append(cb)
            hooks = None
            if any(cb[1] or cb[2] or cb[3] for cb in cbs):
                hooks = _State(dsk, keys, cache, cbs, keep_results=not memory_limit)
                state = hooks.state
                for cb in cbs:
                    if cb[1]:
                        cb[1](dsk, state)
            _tessera._set_worker_stack(_worker_stack())
            result = _tessera._run(
                dsk,
                keys,
                num_workers,
                results_limit,
                str(spill_dir or ""),
                cache if isinstance(cache, dict) else (dict(cache) if cache is not None else None),
                hooks,
                bool(rerun_exceptions_locally),
                raise_exception,
                bool(progress),
                str(trace or ""),
                str(report or ""),
                " ".join(sys.argv) or "python",
                _held() if memory_limit else None,
            )
            succeeded = True
        finally:
            for cb in started:
                if cb[4]:
                    cb[4](dsk, state, not succeeded)
    return result


# The stack a worker thread gets at least: glibc's default for a thread, as the
# Python threads dask's pool runs task bodies on have (tessera's threads are oneTBB's).
_WORKER_STACK = 8 << 20


def _worker_stack():
    """The stack of tessera.get's worker threads: 8 MiB, or ``threading.stack_size()``
    when that is set larger, or ``$TESSERA_WORKER_STACK`` (bytes, or "64MiB") when
    that is larger still. Threads keep the stack they started with: a larger one asked
    for after a run reaches the threads oneTBB starts from then on."""
    import os
    import threading

    wanted = max(_WORKER_STACK, threading.stack_size())
    env = os.environ.get("TESSERA_WORKER_STACK")
    if env:
        from dask.utils import parse_bytes

        try:
            wanted = max(wanted, int(parse_bytes(env)))
        except (ValueError, TypeError) as e:
            raise ValueError(f"TESSERA_WORKER_STACK={env!r}: expected a size in bytes such as 67108864 or "
                             f"'64MiB' ({e})") from None
    return wanted


# The most threads a run takes (a C int; oneTBB caps them at the cores anyway).
_MAX_WORKERS = 2**31 - 1


def _check_workers(num_workers):
    """``num_workers`` as an int, or a TypeError/ValueError that names it."""
    import numbers

    if isinstance(num_workers, bool) or not isinstance(num_workers, numbers.Integral):
        raise TypeError(f"num_workers={num_workers!r}: expected an int, 0 for every core, found "
                        f"{type(num_workers).__name__}")
    if not 0 <= num_workers <= _MAX_WORKERS:
        raise ValueError(f"num_workers={num_workers!r}: expected 0 (every core) or a count of threads from 1 to "
                         f"2**31-1")
    return int(num_workers)


def _check_memory_limit(memory_limit):
    """``memory_limit`` in bytes (0: none), or a TypeError/ValueError that names it."""
    import math
    import numbers

    accepted = "expected bytes as an int or float >= 0 or a string such as '2GiB' (None or 0: no limit)"
    if memory_limit is None:
        return 0
    if isinstance(memory_limit, str):
        from dask.utils import parse_bytes

        try:
            parsed = parse_bytes(memory_limit)
        except (ValueError, TypeError) as e:
            raise ValueError(f"memory_limit={memory_limit!r}: {accepted} ({e})") from None
        return _check_memory_limit(parsed)
    if isinstance(memory_limit, bool) or not isinstance(memory_limit, (numbers.Integral, numbers.Real)):
        raise TypeError(f"memory_limit={memory_limit!r}: {accepted}, found {type(memory_limit).__name__}")
    if not (math.isfinite(memory_limit) and 0 <= memory_limit < 2**63):
        raise ValueError(f"memory_limit={memory_limit!r}: {accepted}")
    return int(memory_limit)


def _results_limit(memory_limit):
    """The bytes a run's results may hold under ``memory_limit``, which bounds the
    process: what it holds when the run starts (the interpreter, its modules, the
    graph, the caller's data) counts against the limit, the results get the rest."""
    start = _tessera._resident_bytes()
    if memory_limit <= start:
        raise _tessera.MemoryLimitError(
            f"memory_limit of {memory_limit / 2**20:.1f} MiB is no more than the {start / 2**20:.1f} MiB the process "
            f"holds at the start of the run: expected a limit above that, which leaves the results room")
    return memory_limit - start


def _held():
    """What a run under a memory limit holds of each result, and its bytes: called by
    the scheduler with every result and its key, it returns ``(object, nbytes,
    spillable)``.

    The size is ``dask.sizeof.sizeof``, except for a numpy view, which keeps its
    base's whole buffer alive however small it is itself (a ``[::8]`` of a 32 MiB
    block holds 32 MiB): a view of a buffer more than twice its size (64 KiB or more)
    is held as a compact copy, as ``dask.array.chunk.getitem`` does for the same
    reason, so the base goes once its own readers are done (the copy costs the view's
    bytes once); a larger view (a transpose, ``x[:, 1:]``) counts its buffer's bytes.

    A result that cannot be sized (``sizeof`` raises, as it does for a list deeper
    than the recursion limit or one that contains itself, or gives a negative size or
    one past 2**60) is counted at its own object's size without its contents
    (``object.__sizeof__``), kept in memory and never spilled, with a RuntimeWarning
    naming its key and why.
    """
    from dask.sizeof import sizeof

    def held(result, key):
        try:
            nbytes = sizeof(result)
            if not isinstance(nbytes, int) or not 0 <= nbytes <= _MAX_SIZEOF:
                raise ValueError(f"sizeof gave {nbytes!r}, expected an int from 0 to 2**60")
        except Exception as e:  # noqa: BLE001 - any failure of a user's __sizeof__
            nbytes = object.__sizeof__(result)
            warnings.warn(f"tessera: cannot size the result of {key!r} ({type(e).__name__}: {e}); counted at "
                          f"{nbytes} bytes, it stays in memory and never spills", RuntimeWarning, stacklevel=1)
            return result, nbytes, False
        np = sys.modules.get("numpy")  # no numpy imported: no numpy results either
        if np is None or not isinstance(result, np.ndarray) or result.base is None:
            return result, nbytes, True
        kept = _buffer_bytes(result, np)
        if kept >= _COMPACT_FROM and kept > 2 * result.nbytes:
            return result.copy(order="K"), result.nbytes, True
        return result, max(nbytes, kept), True

    return held


# Sizes past this (an exbibyte) are a __sizeof__'s mistake, not memory.
_MAX_SIZEOF = 1 << 60

# Views of buffers smaller than this stay views (the smallest result that may spill).
_COMPACT_FROM = 65536


def _buffer_bytes(view, np):
    """The bytes of the buffer a numpy view keeps alive: its root array's, or the
    buffer under that (``np.frombuffer`` of bytes, a mapped file), whichever is larger."""
    root = view
    while isinstance(root.base, np.ndarray):
        root = root.base
    kept = root.nbytes
    if root.base is not None:
        try:
            kept = max(kept, memoryview(root.base).nbytes)
        except TypeError:  # a base without the buffer protocol: the array's bytes
            pass
    return kept


def order(dsk):
    """Priorities of the tasks of ``dsk`` (smaller runs first), as ``dask.order.order``
    gives them: a dict with every key of the graph."""
    return _tessera._order(_as_dict(dsk))


def cull(dsk, keys):
    """What ``keys`` need of ``dsk``, as ``dask.optimization.cull``: (graph, dependencies)."""
    dsk = _as_dict(dsk)
    if not isinstance(keys, list):
        keys = [keys]
    for k in _flatten(keys):
        if k not in dsk:
            raise KeyError(k)
    dependencies = _tessera._cull_dependencies(dsk, keys)
    return {k: dsk[k] for k in dependencies}, dependencies


def fuse(dsk, keys=None, dependencies=None):
    """Linear chains of ``dsk`` merged into one task each, as ``dask.optimization.fuse``
    returns them: ``(graph, dependencies)``, with ``dependencies`` a dict key -> set of keys.

    tessera's rule (tessera::fuse, dask's ``fuse_linear``): a task is merged into its
    reader when it has exactly one reader, that reader reads nothing else, and the task is
    not in ``keys``. The merged task keeps the key of the chain's last task, its
    expression the chain's tasks substituted into one another (``dask.core.subs``). So the
    keys in ``keys``, and every key that is no link of a chain, stay and compute the same
    values; unlike dask's ``fuse``, keys are not renamed (dask's ``rename_keys``) and
    wider shapes dask may fuse with ``ave_width`` (a task read by several) stay apart.
    ``dependencies`` is accepted for dask's signature and not needed.
    """
    from dask.core import subs

    dsk = _as_dict(dsk)
    if keys is not None and not isinstance(keys, list):
        keys = [keys]
    chains, deps = _tessera._fuse_chains(dsk, keys)
    out = dict(dsk)
    for chain in chains:
        task = dsk[chain[0]]
        for link, reader in zip(chain, chain[1:]):
            task = subs(dsk[reader], link, task)
            del out[link]
        out[chain[-1]] = task
    return out, deps
