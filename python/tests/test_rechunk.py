"""tessera.rechunk: results equal to zarr-python's reading of the source, and errors with
tessera's messages that leave nothing behind."""
import json
import os
import pathlib
import subprocess
import sys
import textwrap
from typing import Any, Literal

import numpy as np
import numpy.typing as npt
import pytest
import zarr

import tessera

# The source fixture: a zarr store's path and the values it holds.
Source = tuple[str, npt.NDArray[np.float64]]


@pytest.fixture
def source(tmp_path: pathlib.Path) -> Source:
    """A zarr v2 store of 120 x 90 float64 in blocks of 10 rows, and its values."""
    values = np.arange(120 * 90, dtype=np.float64).reshape(120, 90) * 0.5
    path = str(tmp_path / "rows.zarr")
    z = zarr.open(path, mode="w", shape=values.shape, chunks=(10, 90), dtype=values.dtype, compressor=None)
    z[:] = values
    return path, values


def listing(folder: str | os.PathLike[str]) -> list[str]:
    return sorted(os.listdir(folder))


@pytest.mark.parametrize("method", ["auto", "tasks", "shuffle"])
def test_rows_to_columns_equals_the_source(tmp_path: pathlib.Path, source: Source,
                                           method: Literal["auto", "tasks", "shuffle"]) -> None:
    src, values = source
    dst = str(tmp_path / "cols.zarr")
    done = tessera.rechunk(src, dst, (-1, 16), max_mem="64MiB", method=method, progress=False)
    out = zarr.open(dst, mode="r")
    assert out.chunks == (120, 16)
    np.testing.assert_array_equal(out[:], values)
    assert done["chunks"][0] == (120,)
    assert done["chunks"][1] == (16,) * 5 + (10,)


def test_npy_source_into_zarr_v3_with_a_codec(tmp_path: pathlib.Path) -> None:
    values = np.random.default_rng(1).integers(0, 1000, size=(64, 48), dtype=np.int32)
    src = str(tmp_path / "a.npy")
    np.save(src, values)
    dst = str(tmp_path / "b.zarr")
    tessera.rechunk(src, dst, [8, None], max_mem=16 << 20, codec="zstd:3", zarr_format=3, progress=False)
    with open(os.path.join(dst, "zarr.json")) as f:
        meta = json.load(f)
    assert meta["zarr_format"] == 3 and meta["chunk_grid"]["configuration"]["chunk_shape"] == [8, 48]
    # zarr-python 2 reads v2 only: read back with tessera's own npy path.
    back = str(tmp_path / "back.npy")
    tessera.rechunk(dst, back, [-1, -1], progress=False)
    np.testing.assert_array_equal(np.load(back), values)


def test_shards_of_inner_chunks(tmp_path: pathlib.Path, source: Source) -> None:
    src, values = source
    dst = str(tmp_path / "sharded.zarr")
    done = tessera.rechunk(src, dst, (20, 15), shard=(40, 30), progress=False)
    assert done["chunks"][0] == (40, 40, 40)
    back = str(tmp_path / "back.npy")
    tessera.rechunk(dst, back, (-1, -1), progress=False)
    np.testing.assert_array_equal(np.load(back), values)


def test_zarr_v2_with_blosc_read_by_zarr_python(tmp_path: pathlib.Path, source: Source) -> None:
    src, values = source
    dst = str(tmp_path / "blosc.zarr")
    tessera.rechunk(src, dst, {1: 45}, codec="blosc:lz4:5:shuffle", progress=False)
    out = zarr.open(dst, mode="r")
    assert out.chunks == (10, 45)
    assert out.compressor.cname == "lz4"
    np.testing.assert_array_equal(out[:], values)


def test_an_existing_target_is_refused_and_left_as_it_was(tmp_path: pathlib.Path, source: Source) -> None:
    src, _ = source
    dst = str(tmp_path / "cols.zarr")
    tessera.rechunk(src, dst, (-1, 16), progress=False)
    before = listing(dst)
    with pytest.raises(tessera.StorageError, match="the target exists; pass overwrite to replace it"):
        tessera.rechunk(src, dst, (-1, 30), progress=False)
    assert listing(dst) == before
    assert zarr.open(dst, mode="r").chunks == (120, 16)
    tessera.rechunk(src, dst, (-1, 30), overwrite=True, progress=False)
    assert zarr.open(dst, mode="r").chunks == (120, 30)


def test_a_foreign_folder_is_never_replaced(tmp_path: pathlib.Path, source: Source) -> None:
    src, _ = source
    foreign = tmp_path / "photos"
    foreign.mkdir()
    (foreign / "holiday.jpg").write_bytes(b"not tessera's")
    with pytest.raises(tessera.StorageError, match="will not replace it"):
        tessera.rechunk(src, str(foreign), (-1, 16), overwrite=True, progress=False)
    assert listing(foreign) == ["holiday.jpg"]
    assert (foreign / "holiday.jpg").read_bytes() == b"not tessera's"


def test_the_source_is_never_replaced(tmp_path: pathlib.Path, source: Source) -> None:
    src, values = source
    with pytest.raises(tessera.StorageError, match="the source"):
        tessera.rechunk(src, src, (-1, 16), overwrite=True, progress=False)
    np.testing.assert_array_equal(zarr.open(src, mode="r")[:], values)


@pytest.mark.parametrize(
    "chunks, message",
    [
        ((0, 16), "expected a block size of at least 1"),
        ((-1,), "expected chunks for 2 axes, found 1"),
        (("big", 4), "expected a block size, -1, 'auto', 'keep' or None per axis, found 'big'"),
        ((1.5, 4), "found a float"),
        ("16", "expected a tuple or list with one entry per axis"),
        ({5: 4}, "expected axes below 2"),
    ],
)
def test_bad_chunks_are_a_chunk_error_and_write_nothing(tmp_path: pathlib.Path, source: Source, chunks: Any,
                                                        message: str) -> None:
    src, _ = source
    before = listing(tmp_path)
    with pytest.raises(tessera.ChunkError, match=message) as info:
        tessera.rechunk(src, str(tmp_path / "out.zarr"), chunks, progress=False)
    assert isinstance(info.value, ValueError) and isinstance(info.value, tessera.Error)
    assert listing(tmp_path) == before


def test_max_mem_too_small_for_the_blocks(tmp_path: pathlib.Path, source: Source) -> None:
    src, _ = source
    before = listing(tmp_path)
    with pytest.raises(tessera.ChunkError, match="cannot hold the blocks of chunks .* the smallest max_mem that works is"):
        tessera.rechunk(src, str(tmp_path / "out.zarr"), (-1, -1), max_mem="10KiB", num_workers=1, progress=False)
    assert listing(tmp_path) == before


@pytest.mark.parametrize(
    "kwargs, error, message",
    [
        ({"max_mem": "lots"}, tessera.ChunkError, "max_mem: "),
        ({"max_mem": 0}, tessera.ChunkError, "max_mem: expected a positive size, found 0"),
        ({"method": "magic"}, tessera.ChunkError, "method: expected 'auto', 'tasks' or 'shuffle', found 'magic'"),
        ({"zarr_format": 4}, tessera.ValueError, "zarr_format: expected 2 or 3, found 4"),
        ({"shard": (40, 30)}, tessera.ChunkError, "shard: needs zarr_format=3"),
        ({"codec": "lz4", "zarr_format": 3}, tessera.ChunkError, "codec: "),
    ],
)
def test_bad_options(tmp_path: pathlib.Path, source: Source, kwargs: dict[str, Any], error: type[Exception],
                     message: str) -> None:
    src, _ = source
    if "shard" in kwargs:
        kwargs["zarr_format"] = 2
    before = listing(tmp_path)
    with pytest.raises(error, match=message) as info:
        tessera.rechunk(src, str(tmp_path / "out.zarr"), (20, 15), progress=False, **kwargs)
    assert isinstance(info.value, ValueError) and isinstance(info.value, tessera.Error)
    assert listing(tmp_path) == before


@pytest.mark.parametrize(
    "codec, message",
    [
        ("snappy", "codec: unknown codec 'snappy'; expected none, blosc"),
        ("blosc:fast", "codec: codec blosc: expected CNAME blosclz, lz4, lz4hc, zlib or zstd, found 'fast'"),
        ("zstd:99", "codec: codec zstd: expected an integer from"),
    ],
)
def test_a_bad_codec_spec_is_a_chunk_error_naming_codec(tmp_path: pathlib.Path, source: Source, codec: str,
                                                        message: str) -> None:
    src, _ = source
    before = listing(tmp_path)
    with pytest.raises(tessera.ChunkError, match=message):
        tessera.rechunk(src, str(tmp_path / "out.zarr"), (20, 15), codec=codec, progress=False)
    assert listing(tmp_path) == before


def test_other_value_errors_are_not_codec_errors(tmp_path: pathlib.Path, source: Source) -> None:
    """Only a codec spec's errors say "codec:"; a bad format is tessera.ValueError, a Python ValueError."""
    src, _ = source
    with pytest.raises(tessera.ValueError) as info:
        tessera.rechunk(src, str(tmp_path / "out.zarr"), (20, 15), zarr_format=1, progress=False)
    assert str(info.value) == "zarr_format: expected 2 or 3, found 1"
    assert not isinstance(info.value, tessera.ChunkError)
    x = tessera.array.from_zarr(src)
    with pytest.raises(tessera.ValueError, match="^zarr_format: expected 2 or 3, found 5$"):
        tessera.array.store(x, str(tmp_path / "x.zarr"), zarr_format=5)
    with pytest.raises(tessera.ChunkError, match="^codec: unknown codec 'snappy'"):
        tessera.array.store(x, str(tmp_path / "x.zarr"), codec="snappy")
    assert listing(tmp_path) == ["rows.zarr"]


HUGE_V3 = {
    "zarr_format": 3, "node_type": "array", "shape": [16777216, 8388608], "data_type": "float64",
    "chunk_grid": {"name": "regular", "configuration": {"chunk_shape": [256, 256]}},
    "chunk_key_encoding": {"name": "default"}, "fill_value": 0.0,
    "codecs": [{"name": "bytes", "configuration": {"endian": "little"}}],
}
HUGE_V2 = {
    "zarr_format": 2, "shape": [16777216, 8388608], "chunks": [256, 256], "dtype": "<f8",
    "compressor": None, "filters": None, "fill_value": 0.0, "order": "C",
}


@pytest.mark.parametrize("meta_name, meta", [("zarr.json", HUGE_V3), (".zarray", HUGE_V2)])
def test_a_store_declaring_2_31_chunks_is_refused_at_once(tmp_path: pathlib.Path, meta_name: str,
                                                          meta: dict[str, Any]) -> None:
    """A few hundred bytes declare 2^31 chunks of 256 x 256 float64 (a petabyte): reading them needs
    2^31 tasks, about 2 TiB of graph. tessera.rechunk refuses before it builds one, naming the count,
    as `tessera rechunk` does. Run in a child under a 4 GiB address-space limit, so that a missing check
    fails this test (MemoryError or a kill) instead of the machine."""
    huge = tmp_path / "huge.zarr"
    huge.mkdir()
    (huge / meta_name).write_text(json.dumps(meta))
    script = textwrap.dedent(
        f"""
        import resource, tessera
        resource.setrlimit(resource.RLIMIT_AS, (4 << 30, 4 << 30))
        try:
            tessera.rechunk({str(huge)!r}, {str(tmp_path / 'out.zarr')!r}, (65536, 65536), max_mem="64MiB",
                            progress=False)
        except tessera.ChunkError as e:
            print(type(e).__name__, "|", e)
        """
    )
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stderr[-2000:]
    assert run.stdout.startswith("ChunkError | max_mem: 67108864 bytes cannot hold the task graph of "), run.stdout
    assert "its 2147483648 chunks of (256, 256)" in run.stdout
    assert "give a larger max_mem" in run.stdout
    assert listing(tmp_path) == ["huge.zarr"]
    assert listing(huge) == [meta_name]


def test_a_target_of_too_many_chunks_is_refused_naming_the_count(tmp_path: pathlib.Path) -> None:
    src = str(tmp_path / "a.npy")
    np.save(src, np.ones((2048, 2048), dtype=np.uint8))
    with pytest.raises(tessera.ChunkError, match=r"to 1048576 chunks of \(2, 2\): about .* choose larger chunks or give a larger max_mem"):
        tessera.rechunk(src, str(tmp_path / "out.zarr"), (2, 2), max_mem="64MiB", progress=False)
    assert listing(tmp_path) == ["a.npy"]


def test_a_shard_index_counts_against_max_mem(tmp_path: pathlib.Path) -> None:
    """2^20 inner chunks of one byte in one shard: 48 MiB of index while the shard is written."""
    src = str(tmp_path / "a.npy")
    np.save(src, np.ones((1024, 1024), dtype=np.uint8))
    with pytest.raises(tessera.ChunkError, match=r"with its index of 1048576 inner chunks of chunks \(1, 1\) "
                       r"\(50331648 bytes while written, 48 per inner chunk\)"):
        tessera.rechunk(src, str(tmp_path / "s.zarr"), (1, 1), shard=(1024, 1024), max_mem="64MiB", num_workers=1,
                        progress=False)
    assert listing(tmp_path) == ["a.npy"]


def test_a_missing_source_names_it(tmp_path: pathlib.Path) -> None:
    with pytest.raises(tessera.StorageError, match="nothing.zarr"):
        tessera.rechunk(str(tmp_path / "nothing.zarr"), str(tmp_path / "out.zarr"), (1,), progress=False)
    assert listing(tmp_path) == []


def test_ctrl_c_stops_the_run_and_leaves_no_temporaries(tmp_path: pathlib.Path) -> None:
    """A subprocess rechunking a store under a small budget (its 128 MiB spill) is sent SIGINT mid-run."""
    script = textwrap.dedent(
        f"""
        import numpy as np, sys, zarr, tessera
        src = {str(tmp_path / 'src.zarr')!r}
        z = zarr.open(src, mode="w", shape=(4000, 4000), chunks=(1, 4000), dtype="f8", compressor=None)
        z[:] = 1.0
        print("ready", flush=True)
        try:
            tessera.rechunk(src, {str(tmp_path / 'dst.zarr')!r}, (4000, 100), max_mem="32MiB",
                            method="tasks", num_workers=1, progress=False)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        print("finished", flush=True)
        """
    )
    env = dict(os.environ)
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True, env=env)
    assert proc.stdout is not None
    assert proc.stdout.readline().strip() == "ready"
    import time

    time.sleep(1.0)
    proc.send_signal(2)
    out, _ = proc.communicate(timeout=120)
    if "finished" in out:  # exit status 0, or a KeyboardInterrupt raised just after the run
        pytest.skip("the run finished before the signal came")
    assert proc.returncode == 3, out
    assert "interrupted" in out
    if listing(tmp_path) == ["dst.zarr", "src.zarr"]:
        # The signal came as the run published its output: a whole store, no temporary.
        import zarr

        assert (zarr.open(str(tmp_path / "dst.zarr"), mode="r")[:] == 1.0).all()
        assert zarr.open(str(tmp_path / "dst.zarr"), mode="r").chunks == (4000, 100)
        return
    assert listing(tmp_path) == ["src.zarr"]
