"""tessera.array.to_dask / from_dask (arrays across the two libraries) and tessera.fuse
(dask.optimization.fuse's contract over tessera's fuse)."""
import operator
import pathlib
from collections.abc import Hashable
from typing import Any

import dask
import dask.array as da
import numpy as np
import numpy.typing as npt
import pytest
import zarr
from dask.core import get as dask_core_get
from dask.optimization import fuse as dask_fuse

import tessera
import tessera.array as ta


@pytest.fixture
def a() -> npt.NDArray[np.float64]:
    return np.random.default_rng(3).standard_normal((45, 31))


# ---- to_dask ---------------------------------------------------------------------------


def test_to_dask_has_x_chunks_dtype_and_values(a: npt.NDArray[np.float64]) -> None:
    x = ta.from_numpy(a, chunks=(10, 8)) * 2 + 1
    d = ta.to_dask(x)
    assert isinstance(d, da.Array)
    assert d.chunks == x.chunks and d.dtype == x.dtype and d.shape == x.shape
    for scheduler in ("sync", "threads", tessera.get):
        np.testing.assert_array_equal(d.compute(scheduler=scheduler), a * 2 + 1)
    # One block alone: only its part of x's graph runs.
    np.testing.assert_array_equal(d.blocks[2, 3].compute(scheduler="sync"), (a * 2 + 1)[20:30, 24:31])


def test_to_dask_sum_on_tessera_get_equals_tessera_sum(a: npt.NDArray[np.float64]) -> None:
    x = ta.from_numpy(a, chunks=(7, 9)).T @ ta.from_numpy(a, chunks=(7, 9))
    got = ta.to_dask(x).sum().compute(scheduler=tessera.get)
    assert got == pytest.approx(ta.sum(x).compute())
    assert got == pytest.approx((a.T @ a).sum())


def test_to_dask_of_a_zarr_store_and_a_rechunk(tmp_path: pathlib.Path, a: npt.NDArray[np.float64]) -> None:
    path = str(tmp_path / "a.zarr")
    zarr.open(path, mode="w", shape=a.shape, chunks=(9, 31), dtype=a.dtype, compressor=None)[:] = a
    x = ta.from_zarr(path).rechunk((45, 4))
    d = ta.to_dask(x)
    assert d.chunks == ((45,), (4,) * 7 + (3,))
    np.testing.assert_array_equal(d.compute(scheduler=tessera.get), a)
    np.testing.assert_allclose(d.mean(axis=0).compute(scheduler=tessera.get), a.mean(axis=0))


def test_to_dask_refuses_what_is_not_a_tessera_array(a: npt.NDArray[np.float64]) -> None:
    with pytest.raises(TypeError, match="to_dask: expected a tessera.array.Array, found ndarray"):
        ta.to_dask(a)  # type: ignore[arg-type]  # the wrong type on purpose


# ---- from_dask -------------------------------------------------------------------------


@pytest.mark.parametrize("chunks", [(10, 8), (45, 31), (1, 31)])
def test_round_trips_equal_numpy(a: npt.NDArray[np.float64], chunks: Any) -> None:
    d = da.from_array(a, chunks=chunks)
    x = ta.from_dask(d)
    assert x.chunks == d.chunks and x.dtype == a.dtype
    np.testing.assert_array_equal(x.compute(), a)
    np.testing.assert_array_equal(ta.to_dask(ta.from_dask(d)).compute(scheduler="sync"), a)
    np.testing.assert_array_equal(ta.from_dask(ta.to_dask(ta.from_numpy(a, chunks=chunks))).compute(), a)


def test_from_dask_of_dask_operations_then_tessera_operations(tmp_path: pathlib.Path,
                                                             a: npt.NDArray[np.float64]) -> None:
    path = str(tmp_path / "a.zarr")
    zarr.open(path, mode="w", shape=a.shape, chunks=(15, 31), dtype=a.dtype, compressor=None)[:] = a
    d = (da.from_zarr(path) - da.from_zarr(path).mean(axis=0)).rechunk((9, 10))
    x = ta.from_dask(d)
    want = a - a.mean(axis=0)
    np.testing.assert_allclose(x.compute(), want)
    np.testing.assert_allclose(ta.std(x, axis=1).compute(), want.std(axis=1))
    ints = ta.from_dask(da.arange(100, chunks=30, dtype=np.int32) % 7 == 0)
    np.testing.assert_array_equal(ints.compute(), np.arange(100) % 7 == 0)


def test_from_dask_refusals_name_what_could_not_be_converted(a: npt.NDArray[np.float64]) -> None:
    with pytest.raises(TypeError, match="from_dask: expected a dask.array.Array, found ndarray"):
        ta.from_dask(a)
    unknown = da.from_array(a, chunks=10)
    unknown = unknown[unknown[:, 0] > 0]
    with pytest.raises(tessera.ValueError, match=r"has chunks of unknown size \(nan\) along axis 0; "
                       r"call compute_chunk_sizes\(\) first"):
        ta.from_dask(unknown)
    with pytest.raises(tessera.ValueError, match="has dtype object; tessera arrays hold bool, integer, float"):
        ta.from_dask(da.from_array(np.array(["a", None], dtype=object), chunks=1))
    # A block that is no numpy array is found when it is computed, and named.
    meta = np.empty((0, 0), dtype=a.dtype)
    lists = da.from_array(a, chunks=(15, 31)).map_blocks(lambda b: b.tolist(), dtype=a.dtype, meta=meta)
    with pytest.raises(tessera.TaskError, match=r"block \('lambda-[0-9a-f]+', [0-2], 0\) is a list, expected a numpy array"):
        ta.from_dask(lists).compute()
    wrong = da.from_array(a, chunks=(15, 31)).map_blocks(lambda b: b[:2], dtype=a.dtype, meta=meta)
    with pytest.raises(tessera.TaskError, match=r"is a float64 array of shape \(2, 31\), expected float64 of shape "
                       r"\(15, 31\)"):
        ta.from_dask(wrong).compute()


# ---- fuse ------------------------------------------------------------------------------


def inc(x: int) -> int:
    return x + 1


def add(x: int, y: int) -> int:
    return x + y


GRAPHS: dict[str, tuple[dict[Hashable, Any], list[Hashable]]] = {
    # a -> b -> c -> d: one chain.
    "chain": ({"a": 1, "b": (inc, "a"), "c": (inc, "b"), "d": (inc, "c")}, ["d"]),
    #   a          a is read by two: b, c;  b -> d and c -> e are chains;  f reads both
    #  / \
    # b   c
    # |   |
    # d   e
    #  \ /
    #   f
    "diamond": ({"a": 1, "b": (inc, "a"), "c": (inc, "a"), "d": (inc, "b"), "e": (inc, "c"),
                 "f": (add, "d", "e")}, ["f"]),
    # a chain whose middle is kept as an output: it is not fused away
    "kept": ({"x": 2, "y": (inc, "x"), "z": (inc, "y"), "w": (inc, "z")}, ["w", "y"]),
    # dask.array's keys and nested tasks / lists
    "tuples": ({("x", 0): 1, ("x", 1): 2, ("y", 0): (inc, ("x", 0)), ("y", 1): (inc, ("x", 1)),
                ("z", 0): (inc, ("y", 0)), ("z", 1): (add, (inc, ("y", 1)), 10),
                "s": (sum, [("z", 0), ("z", 1)])}, ["s"]),
}


@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_fuse_computes_the_same_values_as_dask_fuse(name: str) -> None:
    dsk, keys = GRAPHS[name]
    ours, deps = tessera.fuse(dsk, keys)
    theirs, _ = dask_fuse(dsk, keys, rename_keys=False)
    for k in keys:
        assert dask_core_get(ours, k) == dask_core_get(theirs, k) == dask_core_get(dsk, k)
    assert set(keys) <= set(ours)
    # The dependencies returned are those of the fused graph.
    from dask.core import get_dependencies

    assert deps == {k: get_dependencies(ours, k) for k in ours}
    assert len(ours) < len(dsk)


def test_fuse_merges_linear_chains_only() -> None:
    dsk, keys = GRAPHS["diamond"]
    ours, deps = tessera.fuse(dsk, keys)
    # b and c fuse into d and e; a (two readers) and f (reads two) stay.
    assert set(ours) == {"a", "d", "e", "f"}
    assert deps == {"a": set(), "d": {"a"}, "e": {"a"}, "f": {"d", "e"}}
    assert ours["d"] == (inc, (inc, "a"))
    chain, _ = tessera.fuse(GRAPHS["chain"][0])
    assert chain == {"a": 1, "d": (inc, (inc, (inc, "a")))}
    with pytest.raises(tessera.Error, match="cycle"):
        tessera.fuse({"p": (inc, "q"), "q": (inc, "p")})


def test_fuse_of_a_dask_array_graph_computes_the_same() -> None:
    x = (da.arange(24, chunks=5) + 1) * 2
    y = x.sum()
    dsk = dict(y.__dask_graph__())
    keys = y.__dask_keys__()
    ours, _ = tessera.fuse(dsk, keys)
    assert len(ours) < len(dsk)
    assert tessera.get(ours, keys) == tessera.get(dsk, keys) == (np.arange(24) + 1).sum() * 2
    with dask.config.set(scheduler=tessera.get):
        assert y.compute() == (np.arange(24) + 1).sum() * 2
