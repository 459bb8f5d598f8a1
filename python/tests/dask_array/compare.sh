#!/usr/bin/env bash
# dask.array's own test modules, once with dask's schedulers and once with every
# scheduler name mapped to tessera.get (the tessera_scheduler plugin); prints the
# counts per module side by side and lists tests that pass with dask's and fail with
# tessera's. Usage: python/tests/dask_array/compare.sh BUILD_DIR [MODULE...]
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=$(cd "${1:?build folder}" && pwd); shift
tests=/usr/lib/python3/dist-packages/dask/array/tests
modules=("$@")
((${#modules[@]})) || modules=(test_array_core test_reductions test_rechunk test_slicing test_creation test_overlap test_linalg)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
run() {  # run NAME MODULE [pytest args]: writes NAME-MODULE.txt (pytest -rA summary)
  local name=$1 module=$2; shift 2
  timeout 1800 /usr/bin/python3 -m pytest -p no:cacheprovider -q -rA -W ignore "$@" "$tests/$module.py" \
    >"$work/$name-$module.txt" 2>&1
}
count() { grep -cE "^$2 " "$1" || true; }
printf '%-18s %12s %12s %12s %12s\n' module "dask passed" "dask failed" "tess passed" "tess failed"
for m in "${modules[@]}"; do
  run dask "$m"
  PYTHONPATH="$build/python:$here" run tessera "$m" -p tessera_scheduler
  printf '%-18s %12s %12s %12s %12s\n' "$m" "$(count "dask-$m.txt" PASSED)" "$(count "dask-$m.txt" FAILED)" \
    "$(count "tessera-$m.txt" PASSED)" "$(count "tessera-$m.txt" FAILED)"
  comm -23 <(grep -E '^PASSED ' "dask-$m.txt" | sort) <(grep -E '^PASSED ' "tessera-$m.txt" | sort) \
    | sed 's/^PASSED /  passes with dask, not with tessera: /'
done
