"""A dask.array pipeline on tessera's scheduler, under a memory limit.

Standardizes a 200 MiB array column by column: dask builds the graph, tessera.get
runs it and keeps the process under `memory_limit`, spilling results to disk
when they would not fit. Run: python pipeline_memory_limit.py
"""
import dask
import dask.array as da
import numpy as np

import tessera  # registers the scheduler name "tessera"


def main() -> None:
    x = da.random.random((5_000, 5_000), chunks=(1_000, 1_000))  # 200 MiB of float64
    y = (x - x.mean(axis=0)) / x.std(axis=0)
    # dask's config keys: the scheduler by name, and tessera's memory limit.
    with dask.config.set({"scheduler": "tessera", "tessera.memory-limit": "600MiB"}):
        # dask.compute is unannotated: --strict asks for this ignore.
        means, stds = dask.compute(y.mean(axis=0), y.std(axis=0))  # type: ignore[no-untyped-call]
    assert np.allclose(means, 0.0, atol=1e-9) and np.allclose(stds, 1.0)
    print(f"tessera {tessera.__version__}: {y.shape} standardized, mean {float(np.abs(means).max()):.1e}, "
          f"std {float(stds.mean()):.6f}")


if __name__ == "__main__":
    main()
