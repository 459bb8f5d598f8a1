"""The rechunk of a zarr store: row blocks to column blocks, on disk, under a memory budget.

Writes a zarr store with zarr-python, rechunks it with tessera.rechunk (which reads
and writes in C++, without the GIL) and reads the result back with zarr-python.
Run: python rechunk_zarr.py [FOLDER]  (default: a temporary folder)
"""
import os
import sys
import tempfile

import numpy as np
import zarr

import tessera


def rechunk_in(folder: str) -> None:
    source = os.path.join(folder, "rows.zarr")
    target = os.path.join(folder, "columns.zarr")
    data = np.arange(2_000 * 3_000, dtype=np.float32).reshape(2_000, 3_000)
    zarr.save_array(source, data, chunks=(100, 3_000))
    done = tessera.rechunk(source, target, chunks=(-1, 100), max_mem="64MiB", codec="zstd:3", progress=False)
    assert done["chunks"][1][0] == 100
    back = zarr.open_array(target, mode="r")
    assert back.chunks == (2_000, 100) and np.array_equal(back[:], data)
    print(f"rechunked {source} {data.shape} from (100, 3000) to {back.chunks} blocks")


def main() -> None:
    if len(sys.argv) > 1:
        rechunk_in(sys.argv[1])
        return
    with tempfile.TemporaryDirectory() as folder:
        rechunk_in(folder)


if __name__ == "__main__":
    main()
