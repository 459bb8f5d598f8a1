#!/usr/bin/env bash
# bench/zarr/hostile.sh TESSERA [DIR]: peak RSS and wall time of `tessera` on the
# hostile zarr stores of issue 25 (items 2, 3, 6, 11), built in DIR (default a
# temporary folder): .zarray linked to /dev/zero, 16 MiB of '[', a FIFO, a folder;
# a 4 KiB zlib chunk in a 200 MiB sparse file; a v3 shard whose index says an inner
# chunk holds 200 MiB; zarr-python's filters=[Zlib] + Zstd; a group linking to
# itself twice. Each run is stopped by SIGINT after its timeout (rc 124). Run it with
# the tessera of two builds to compare them:
#   bench/zarr/hostile.sh build/tools/tessera
set -euo pipefail
T=$(realpath "$1")
D=${2:-$(mktemp -d)}
mkdir -p "$D"
cd "$D"
rm -rf z2 zero big fifo zdir chain2 sparse shard_src shard_sparse grp out.zarr
/usr/bin/python3 - <<'PY'
import zarr, numpy as np, numcodecs
z = zarr.open('z2', mode='w', shape=(4096,), chunks=(1024,), dtype='<f4', compressor=numcodecs.Zlib(1))
z[:] = np.arange(4096, dtype='<f4')
c = zarr.open('chain2', mode='w', shape=(4096,), chunks=(1024,), dtype='<f4', filters=[numcodecs.Zlib(1)], compressor=numcodecs.Zstd(3))
c[:] = np.arange(4096, dtype='<f4')
g = zarr.open_group('grp', mode='w')
g.create_dataset('a', shape=(4,), chunks=(2,), dtype='i4')
PY
ln -s . grp/loop1
ln -s . grp/loop2
for d in zero big fifo zdir; do mkdir $d; cp z2/0 $d/0; done
ln -s /dev/zero zero/.zarray
head -c $((16 << 20)) /dev/zero | tr '\0' '[' > big/.zarray
mkfifo fifo/.zarray
mkdir zdir/.zarray
cp -r z2 sparse && truncate -s 200M sparse/1
"$T" rechunk z2 shard_src --chunks 1024 --shard 4096 --zarr-format 3 --codec zstd --no-progress 2>/dev/null
cp -r shard_src shard_sparse
/usr/bin/python3 - <<'PY'
import struct
from crcmod.predefined import mkPredefinedCrcFun
crc32c = mkPredefinedCrcFun('crc-32c')  # Debian's python3-crcmod
size, n = 200 << 20, 4
data = open('shard_src/c/0', 'rb').read()[:-(16 * n + 4)]
index = struct.pack('<QQ', 0, size - (16 * n + 4)) + struct.pack('<QQ', 2**64 - 1, 2**64 - 1) * (n - 1)
with open('shard_sparse/c/0', 'wb') as f:
    f.write(data)
    f.truncate(size - (16 * n + 4))
    f.seek(size - (16 * n + 4))
    f.write(index + struct.pack('<I', crc32c(index)))
PY
m() {  # label, timeout, command...
  local label=$1 limit=$2
  shift 2
  rm -rf out.zarr
  /usr/bin/time -f "%M %e %x" -o time.txt timeout -s INT "$limit" "$@" >/dev/null 2>err.txt || true
  read -r rss wall rc < <(tail -1 time.txt)
  printf "%-30s peak RSS %8s KiB  wall %6s s  rc %3s  %s\n" "$label" "$rss" "$wall" "$rc" "$(tail -1 err.txt | cut -c1-100)"
}
m "info .zarray -> /dev/zero" 10 "$T" info zero
m "info .zarray: 16 MiB of [" 60 "$T" info big
m "info .zarray a FIFO" 5 "$T" info fifo
m "info .zarray a folder" 5 "$T" info zdir
m "rechunk 200 MiB v2 chunk" 60 "$T" rechunk sparse out.zarr --chunks 4096 --no-progress
m "rechunk 200 MiB v3 shard" 60 "$T" rechunk shard_sparse out.zarr --chunks 4096 --no-progress
m "rechunk filters=[Zlib]+Zstd" 20 "$T" rechunk chain2 out.zarr --chunks 4096 --no-progress
m "info group linking to itself" 90 "$T" info grp
