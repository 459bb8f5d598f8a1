#!/usr/bin/env bash
# The growth of the rechunk across ranks with ranks and array size, from the plan's own numbers
# (`tessera rechunk --dry-run`, no MPI, no data): a float64 array of 2^20 columns, rows -> columns,
# blocks of 16 rows (128 MiB) into blocks of about 128 MiB of columns, --max-mem per rank, one worker
# per rank. Prints a markdown table (docs/mpi-rechunk.md).
#
# Usage: bench/mpi/plan_table.sh [MAXMEM=4GiB] [BUILD_DIR=build]
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
maxmem=${1:-4GiB}
build=${2:-build}
[[ "$build" = /* ]] || build="$root/$build"
ninja -C "$build" -j2 tools/tessera >/dev/null
echo "| array | ranks | rounds | messages per round (at most) | bytes per message | send per rank per round | peak memory per rank |"
echo "| --- | --- | --- | --- | --- | --- | --- |"
for size_rows in "100 GiB:12800" "1 TiB:131072" "10 TiB:1310720"; do
  label=${size_rows%%:*}
  rows=${size_rows##*:}
  width=$(( (1 << 24) / rows )); [ "$width" -ge 1 ] || width=1
  for ranks in 16 64 256 1024; do
    "$build/tools/tessera" rechunk --dry-run --ranks "$ranks" --shape "$rows,1048576" --dtype float64 \
      --src-chunks 16,-1 --chunks "-1,$width" --max-mem "$maxmem" |
      awk -v label="$label" -v ranks="$ranks" '
        $1 == "0" { messages = $7; per = $8 " " $9; send = $10 " " $11 }
        /^total:/ { rounds = $2; peak = $(NF-1) " " $NF }
        END { printf "| %s | %s | %s | %s | %s | %s | %s |\n", label, ranks, rounds, messages, per, send, peak }'
  done
done
