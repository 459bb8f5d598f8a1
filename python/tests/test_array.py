"""tessera.array: results equal numpy's, errors with tessera's messages."""
import os
import pathlib
from collections.abc import Callable
from typing import Any

import numpy as np
import numpy.typing as npt
import pytest
import zarr

import tessera
import tessera.array as ta


@pytest.fixture
def a() -> npt.NDArray[np.float64]:
    return np.random.default_rng(7).standard_normal((30, 20))


def test_compute_shares_the_result_memory_without_a_copy(a: npt.NDArray[np.float64]) -> None:
    x = ta.from_numpy(a, chunks=(7, 6))
    assert x.shape == (30, 20) and x.dtype == np.float64 and x.ndim == 2
    assert x.chunks == ((7, 7, 7, 7, 2), (6, 6, 6, 2))
    r = (x + 0).compute()
    assert not r.flags.owndata and type(r.base).__name__ == "PyCapsule"
    np.testing.assert_array_equal(r, a)
    r2 = np.asarray(x * 1)
    np.testing.assert_array_equal(r2, a)


def test_from_numpy_copies_once(a: npt.NDArray[np.float64]) -> None:
    b = a.copy()
    x = ta.from_numpy(b, chunks=10)
    b[:] = 0
    np.testing.assert_array_equal(x.compute(), a)


@pytest.mark.parametrize("chunks", [(7, 6), (30, 20), -1, "auto", (None, 5)])
def test_elementwise_with_numpy_broadcasting(a: npt.NDArray[np.float64], chunks: Any) -> None:
    x = ta.from_numpy(a, chunks=chunks)
    row = np.arange(20.0)
    col = ta.from_numpy(np.arange(30.0).reshape(30, 1), chunks=(8, 1))
    got = ((x * 2 + 1 - row) / 3 + col) * x
    expect = ((a * 2 + 1 - row) / 3 + np.arange(30.0).reshape(30, 1)) * a
    np.testing.assert_allclose(got.compute(), expect)
    np.testing.assert_allclose((1 - x).compute(), 1 - a)
    np.testing.assert_allclose((2 / (x + 10)).compute(), 2 / (a + 10))
    np.testing.assert_allclose((-x).compute(), -a)


def test_integer_arrays_promote_as_numpy(a: npt.NDArray[np.float64]) -> None:
    i = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = ta.from_numpy(i, chunks=2)
    assert (x + 1).dtype == (i + np.int32(1)).dtype
    assert (x / 2).dtype == np.float64
    np.testing.assert_array_equal((x + x).compute(), i + i)


@pytest.mark.parametrize("axis", [None, 0, 1, (0, 1), -1])
@pytest.mark.parametrize("keepdims", [False, True])
def test_reductions_equal_numpy(a: npt.NDArray[np.float64], axis: int | tuple[int, int] | None,
                                keepdims: bool) -> None:
    x = ta.from_numpy(a, chunks=(7, 6))
    pairs: list[tuple[Callable[..., ta.Array], Callable[..., Any]]] = [
        (ta.sum, np.sum), (ta.mean, np.mean), (ta.std, np.std), (ta.var, np.var), (ta.min, np.min),
        (ta.max, np.max)]
    for ours, theirs in pairs:
        got = ours(x, axis=axis, keepdims=keepdims).compute()
        np.testing.assert_allclose(got, theirs(a, axis=axis, keepdims=keepdims), rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(ta.std(x, axis=axis, ddof=1).compute(), np.std(a, axis=axis, ddof=1))


def test_standardize_as_the_issue_writes_it(a: npt.NDArray[np.float64]) -> None:
    x = ta.from_numpy(a, chunks=(7, 20))
    got = ((x - ta.mean(x, axis=0)) / ta.std(x, axis=0)).compute()
    np.testing.assert_allclose(got, (a - a.mean(0)) / a.std(0))
    s = np.random.default_rng(3).standard_normal((24, 24))
    y = ta.from_numpy(s, chunks=(5, 7))
    np.testing.assert_allclose(ta.sum(y + y.T).compute(), (s + s.T).sum())


def test_transpose_matmul_fft(a: npt.NDArray[np.float64]) -> None:
    x = ta.from_numpy(a, chunks=(7, 6))
    b = np.random.default_rng(8).standard_normal((20, 9))
    y = ta.from_numpy(b, chunks=(5, 4))
    np.testing.assert_array_equal(x.T.compute(), a.T)
    np.testing.assert_array_equal(ta.transpose(x, (1, 0)).compute(), a.T)
    np.testing.assert_allclose((x @ y).compute(), a @ b)
    np.testing.assert_allclose(ta.matmul(x, y).compute(), a @ b)
    np.testing.assert_allclose((x + x.T.T).compute(), a + a)
    np.testing.assert_allclose(ta.fft2(x).compute(), np.fft.fft2(a))
    np.testing.assert_allclose(ta.rfft2(x).compute(), np.fft.rfft2(a))
    c = np.random.default_rng(9).standard_normal((4, 6, 8))
    z = ta.from_numpy(c, chunks=(2, 3, 4))
    np.testing.assert_allclose(ta.fft2(z, axes=(0, 2)).compute(), np.fft.fft2(c, axes=(0, 2)))
    np.testing.assert_allclose(ta.transpose(z, (2, 0, 1)).compute(), c.transpose(2, 0, 1))


def test_from_npy_from_zarr_and_store(tmp_path: pathlib.Path, a: npt.NDArray[np.float64]) -> None:
    npy = str(tmp_path / "a.npy")
    np.save(npy, a)
    x = ta.from_npy(npy, chunks=(10, -1))
    assert x.chunks == ((10, 10, 10), (20,))
    np.testing.assert_array_equal(x.compute(), a)
    out = str(tmp_path / "out.zarr")
    ta.store(x * 2, out, codec="zstd:3")
    z = zarr.open(out, mode="r")
    assert z.chunks == (10, 20)
    np.testing.assert_array_equal(z[:], a * 2)
    np.testing.assert_array_equal(ta.from_zarr(out).compute(), a * 2)
    v3 = str(tmp_path / "v3.zarr")
    ta.store(x, v3, zarr_format=3)
    np.testing.assert_array_equal(ta.from_zarr(v3).compute(), a)
    ta.store(x + 1, out, overwrite=True)
    np.testing.assert_array_equal(zarr.open(out, mode="r")[:], a + 1)
    back = str(tmp_path / "back.npy")
    ta.store(ta.from_zarr(out), back)
    np.testing.assert_array_equal(np.load(back), a + 1)


def test_errors_carry_tessera_messages_and_write_nothing(tmp_path: pathlib.Path, a: npt.NDArray[np.float64]) -> None:
    x = ta.from_numpy(a, chunks=(7, 6))
    with pytest.raises(tessera.Error, match="broadcast"):
        x + ta.from_numpy(np.zeros((3, 3)))
    with pytest.raises(tessera.Error, match="axis"):
        ta.sum(x, axis=5)
    with pytest.raises(tessera.ChunkError, match="chunks: expected an int, 'auto' or one entry per axis"):
        ta.from_numpy(a, chunks=1.5)
    with pytest.raises(tessera.StorageError, match="nothing.zarr"):
        ta.from_zarr(str(tmp_path / "nothing.zarr"))
    out = str(tmp_path / "out.zarr")
    ta.store(x, out)
    before = sorted(os.listdir(tmp_path))
    with pytest.raises(tessera.StorageError, match="the target exists; pass overwrite to replace it"):
        ta.store(x, out)
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "cat.jpg").write_bytes(b"mine")
    with pytest.raises(tessera.StorageError, match="will not replace it"):
        ta.store(x, str(foreign), overwrite=True)
    assert os.listdir(foreign) == ["cat.jpg"]
    with pytest.raises(tessera.ValueError, match="zarr_format: expected 2 or 3, found 5"):
        ta.store(x, str(tmp_path / "z.zarr"), zarr_format=5)
    assert sorted(os.listdir(tmp_path)) == sorted(before + ["photos"])


@pytest.mark.parametrize("call", ["compute", "store"])
def test_ctrl_c_stops_compute_and_store_at_once_and_leaves_no_temporaries(tmp_path: pathlib.Path,
                                                                         call: str) -> None:
    """A subprocess multiplying two 8000² arrays (minutes of GEMM on 2 cores) is sent SIGINT once it runs:
    KeyboardInterrupt comes when the blocks running then finish, not when the whole product is done."""
    import signal
    import subprocess
    import sys
    import textwrap
    import time

    out_path = str(tmp_path / "out.zarr")
    work = "p.compute()" if call == "compute" else f"ta.store(p, {out_path!r})"
    script = textwrap.dedent(
        f"""
        import sys, time, numpy as np, tessera.array as ta
        x = ta.from_numpy(np.ones((8000, 8000)), chunks=1000)
        p = ta.matmul(x, x) + ta.matmul(x, x) + ta.matmul(x, x)
        print("ready", flush=True)
        try:
            {work}
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        print("finished", flush=True)
        """
    )
    with subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True) as proc:
        try:
            assert proc.stdout is not None
            assert proc.stdout.readline().strip() == "ready"
            time.sleep(1.0)
            proc.send_signal(signal.SIGINT)
            # Generous on a loaded machine, and still far below the product's own time (half a minute or more).
            out, _ = proc.communicate(timeout=20)
        finally:
            proc.kill()
    if "finished" in out:
        pytest.skip("the product finished before the signal came")
    assert proc.returncode == 3, out
    assert sorted(os.listdir(tmp_path)) == []
