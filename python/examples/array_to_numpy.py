"""tessera.array: lazy chunked arrays whose operations run in C++, computed into numpy.

Run: python array_to_numpy.py
"""
import numpy as np

import tessera.array as ta


def main() -> None:
    data = np.random.default_rng(0).standard_normal((2_000, 1_000))
    x = ta.from_numpy(data, chunks=(500, 500))  # one copy into tessera's memory; lazy from here on
    y = (x - ta.mean(x, axis=0)) / ta.std(x, axis=0)
    out = y.compute()  # a numpy array over the result's memory, no copy
    expected = (data - data.mean(axis=0)) / data.std(axis=0)
    assert isinstance(out, np.ndarray) and np.allclose(out, expected)
    gram = np.asarray(x.T @ x)  # numpy's protocol computes too
    assert np.allclose(gram, data.T @ data)
    print(f"{y!r} -> numpy {out.dtype} {out.shape}; x.T @ x -> {gram.shape}")


if __name__ == "__main__":
    main()
