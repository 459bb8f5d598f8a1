#!/usr/bin/env bash
# bench/python/run.sh [overhead|rechunk|arrays] [options] (no arguments: all three, one after the other):
#   overhead: tessera.get vs dask.threaded.get vs dask.local.get_sync on dask graphs of
#     100,000 tiny Python tasks (tree, chains, stencil, overlap), one table. Options go to overhead.py.
#   rechunk: tessera.rechunk vs dask.array's rechunk + to_zarr on a zarr store, time and peak RSS.
#     Options go to rechunk.py.
#   arrays: dask.array workloads on 2 GiB of zarr with dask's threads, tessera.get (also under a
#     memory limit) and tessera.array, time and peak RSS. Options go to arrays.py (--size 64MiB
#     for a quick run).
set -euo pipefail
cd "$(dirname "$0")/../.."
[ -d build/meson-private ] || meson setup build >/dev/null
ninja -C build -j2 python/tessera/__init__.py python/tessera/_get.py python/tessera/array.py \
  "python/tessera/$(/usr/bin/python3 -c 'import sysconfig; print("_tessera" + sysconfig.get_config_var("EXT_SUFFIX"))')" >/dev/null
export PYTHONPATH="$PWD/build/python"
if [ $# -eq 0 ]; then
  /usr/bin/python3 bench/python/overhead.py
  /usr/bin/python3 bench/python/rechunk.py
  exec /usr/bin/python3 bench/python/arrays.py
fi
bench=overhead
case "$1" in overhead|rechunk|arrays) bench=$1; shift ;; esac
exec /usr/bin/python3 "bench/python/$bench.py" "$@"
