#!/usr/bin/python3
"""Regenerate the corpus of dask.array graphs in this folder.

Each entry of CORPUS is a file name and a dask.array expression; the script
exports each with tools/export_dask_graph.py (the same export, run in this
process), so every file records dask 2022.12's own figures for its graph.
The corpus widens the eight hand-picked graphs beside it (cumsum, map_overlap,
matmul, normalize, rechunk_rows_to_cols, tree_sum, tsqr, x_plus_xT, which this
script does not touch) to the shapes dask.array users write: where, diff, topk,
einsum, qr, concatenate, 3-D transposes, FFTs after rechunks, anomaly and
standardisation pipelines, reductions along each axis, rechunks, map_overlap,
cumprod, argmin, outer products, and where-then-diff after rechunks.

Random inputs come from a seeded RandomState so the keys (and with them dask's
tie-breaking, hence its figures) are the same on every run. Each graph stays
small (a few hundred to about two thousand tasks): every file here is run by
several test suites.

  /usr/bin/python3 tests/data/graphs/make_corpus.py            # all of them
  /usr/bin/python3 tests/data/graphs/make_corpus.py where diff # some
"""
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "..", "tools"))

import export_dask_graph  # noqa: E402  (after the path to tools/)

R = "da.random.RandomState({seed}).random({shape}, chunks={chunks})"


def rnd(seed, shape, chunks):
    """The expression of a seeded random array."""
    return R.format(seed=seed, shape=shape, chunks=chunks)


X = rnd(1, (120, 120), 10)        # 12 x 12 blocks
Y = rnd(2, (120, 120), 10)
X3 = rnd(3, (40, 40, 40), 10)     # 4 x 4 x 4 blocks
TALL = rnd(4, (600, 12), (25, 12))  # 24 blocks of a tall-skinny matrix
V = rnd(5, (400,), 25)            # 16 blocks
W = rnd(6, (300,), 25)            # 12 blocks
WHERE_DIFF = "(lambda axis, x: da.diff(da.where(x > 0, x, 0), axis=axis))"

CORPUS = [
    ("where", f"(lambda x, y: da.where(x > 0.5, x, y).sum(axis=0))({X}, {Y})"),
    ("diff", f"da.diff({rnd(14, (80, 80), 10)}, axis=1).sum(axis=0)"),
    ("topk", f"{X}.topk(5, axis=0)"),
    ("argtopk", f"{rnd(7, (2000,), 50)}.argtopk(-10)"),
    ("einsum", f"da.einsum('ij,jk->ik', {rnd(8, (80, 80), 10)}, {rnd(9, (80, 80), 10)})"),
    ("einsum_trace", f"da.einsum('ij,ij->i', {X}, {Y})"),
    ("qr", f"da.linalg.qr({TALL})[0]"),
    ("concatenate", f"da.concatenate([{X}, {Y}], axis=1).sum(axis=1)"),
    ("transpose3d", f"(lambda x: (x + x.transpose((2, 0, 1))).sum(axis=1))({X3})"),
    ("transpose3d_swap", f"(lambda x: x - x.transpose((1, 0, 2)))({X3})"),
    ("fft_rechunk", f"da.fft.fft({rnd(10, (160, 160), 20)}.rechunk((10, 160)), axis=1)"),
    ("fft2_rechunk", f"da.fft.fft2({rnd(11, (160, 160), 20)}.rechunk((160, 20)), axes=(0,)).real.sum(axis=1)"),
    ("anomaly", f"(lambda x: x - x.mean(axis=0))({X})"),
    ("standardize_axis1", f"(lambda x: (x - x.mean(axis=1, keepdims=True)) / x.std(axis=1, keepdims=True))({X})"),
    ("anomaly_std", f"(lambda x: ((x - x.mean(axis=0)) / x.std(axis=0)).sum(axis=1))({X})"),
    ("var_axis0", f"{X}.var(axis=0)"),
    ("sum3d_axis2", f"{X3}.sum(axis=2)"),
    ("max3d_axes02", f"{X3}.max(axis=(0, 2))"),
    ("rechunk_blocks", f"{X}.rechunk((40, 15)).sum(axis=1)"),
    ("rechunk3d", f"{X3}.rechunk((40, 5, 20))"),
    ("map_overlap_reflect", f"{rnd(15, (80, 80), 10)}.map_overlap(lambda b: b * 2, depth=2, boundary='reflect').sum(axis=0)"),
    ("cumprod", f"{X}.cumprod(axis=1)"),
    ("argmin", f"{X}.argmin(axis=0)"),
    ("outer", f"da.outer({V}, {W}).sum(axis=0)"),
    ("tensordot", f"da.tensordot({X3}, {rnd(12, (40, 40), 10)}, axes=((2,), (0,))).sum(axis=0)"),
    ("stack_mean", f"da.stack([{X}, {Y}, {rnd(13, (120, 120), 10)}]).mean(axis=0)"),
    # where(x > 0, x, 0) then diff after a rechunk: rechunk-merge tasks whose
    # inputs overlap their neighbours', feeding a subtraction of neighbours.
    ("rechunk_where_diff_rows", f"{WHERE_DIFF}(0, {rnd(16, (120, 120), (20, 10))}.rechunk((30, 30))).sum(axis=1)"),
    ("rechunk_where_diff_cols", f"{WHERE_DIFF}(1, {rnd(17, (120, 120), 10)}.rechunk((40, 15))).sum(axis=0)"),
    ("rechunk_where_diff_sum", f"{WHERE_DIFF}(0, {rnd(18, (120, 120), 10)}.rechunk((15, 40))).sum()"),
    ("rechunk_where_diff_axis0", f"{WHERE_DIFF}(0, {rnd(19, (120, 120), (20, 10))}.rechunk((30, 30))).sum(axis=0)"),
]


def main(argv):
    wanted = set(argv)
    unknown = wanted - {name for name, _ in CORPUS}
    if unknown:
        raise SystemExit("make_corpus: no graph named %s" % ", ".join(sorted(unknown)))
    for name, expr in CORPUS:
        if wanted and name not in wanted:
            continue
        collection = export_dask_graph.load_collection(expr)
        doc = export_dask_graph.export(collection, name, expr)
        export_dask_graph.write_atomically(doc, os.path.join(HERE, name + ".json"))
        ref = doc["reference"]
        print("%-22s %5d tasks  sync_max_held %4d  order_max_pressure %4d"
              % (name, len(doc["tasks"]), ref["sync_max_held"], ref["order_max_pressure"]))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
