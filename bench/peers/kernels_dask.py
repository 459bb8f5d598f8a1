"""dask's side of bench/kernels/run.sh: the matmul rows on numpy over OpenBLAS.

Usage: /usr/bin/python3 kernels_dask.py SCALE REPEATS WORKERS
Prints bench_algebra's form, and which BLAS numpy loaded:
  matmul dask best=... median=... check=... blas=/usr/lib/.../libopenblas.so.0
run.sh selects Debian's libopenblas0-pthread with LD_LIBRARY_PATH (numpy links
libblas.so.3, which Debian's alternatives may point at the reference BLAS) and
unsets OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, so OpenBLAS picks its kernel by the
CPU. numpy's BLAS is held to one thread: dask runs WORKERS block products at once.
"""
import os

for var in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ[var] = "1"

import sys  # noqa: E402

import dask  # noqa: E402
import numpy as np  # noqa: E402

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from algebra_dask import measure, persisted  # noqa: E402


def blas_loaded():
    """The BLAS library this process mapped (numpy loads it at import)."""
    with open("/proc/self/maps") as maps:
        paths = {line.split()[-1] for line in maps if "blas" in line.lower() and "/" in line}
    return ",".join(sorted(paths)) or "none"


def openblas_core():
    """OpenBLAS's kernel name, when the BLAS loaded is OpenBLAS."""
    try:
        import ctypes
        lib = ctypes.CDLL(blas_loaded().split(",")[0])
        lib.openblas_get_corename.restype = ctypes.c_char_p
        return lib.openblas_get_corename().decode()
    except (OSError, AttributeError):
        return "unknown"


def main():
    scale, repeats, workers = (int(v) for v in sys.argv[1:4])
    print(f"blas dask path={blas_loaded()} core={openblas_core()}", flush=True)
    with dask.config.set(scheduler="threads", num_workers=workers):
        for name, dtype in (("matmul", np.float64), ("matmul_f32", np.float32)):
            a = persisted(8192 // scale, 1024 // scale, dtype)
            b = persisted(8192 // scale, 1024 // scale, dtype)
            measure(name, repeats, lambda: a @ b)
            del a, b


if __name__ == "__main__":
    main()
