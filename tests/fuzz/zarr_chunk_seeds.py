#!/usr/bin/python3
"""Writes the seeds of the zarr_chunk harness (tests/fuzz/zarr_chunk_fuzz.cpp) into
corpus/zarr_chunk/: the first byte picks the store, the rest is its chunk file.
Valid chunks of each store, and the hostile ones of issue 25: a shard whose index
claims an inner chunk far bigger than any codec makes, one pointing outside the
shard, a chunk followed by a long tail. Run: /usr/bin/python3 tests/fuzz/zarr_chunk_seeds.py"""
from crcmod.predefined import mkPredefinedCrcFun
import gzip, os, struct, zlib
import numcodecs
import numpy as np

out = os.path.join(os.path.dirname(os.path.abspath(__file__)), 'corpus', 'zarr_chunk')
os.makedirs(out, exist_ok=True)
raw = np.arange(16, dtype='<i4').tobytes()
MISSING = 2**64 - 1


crc32c = mkPredefinedCrcFun('crc-32c')  # Debian's python3-crcmod


def shard(inner, entries=None, at_end=True, crc=True):
    data, index, offset = b'', [], 0 if at_end else 16 * 4 + (4 if crc else 0)
    for part in inner:
        index.append((offset, len(part)))
        data += part
        offset += len(part)
    idx = b''.join(struct.pack('<QQ', *e) for e in (entries or index))
    if crc:
        idx += struct.pack('<I', crc32c(idx))
    return data + idx if at_end else idx + data


def write(name, kind, body):
    with open(os.path.join(out, name), 'wb') as f:
        f.write(bytes([kind]) + body)


zstd = numcodecs.Zstd(1)
inner = [zstd.encode(raw[i * 16:(i + 1) * 16]) for i in range(4)]
write('v2_zlib', 0, zlib.compress(raw, 1))
write('v2_zlib_tail', 0, zlib.compress(raw, 1) + bytes(4096))
write('v2_filter_zlib_zstd', 1, numcodecs.Zstd(3).encode(zlib.compress(raw, 1)))
write('v3_shard_end', 2, shard(inner))
write('v3_shard_missing', 2, shard(inner, [(0, len(inner[0]))] + [(MISSING, MISSING)] * 3))
write('v3_shard_huge_entry', 2, shard(inner, [(0, 2**62)] + [(MISSING, MISSING)] * 3))
write('v3_shard_outside', 2, shard(inner, [(2**63, 16)] + [(MISSING, MISSING)] * 3))
write('v3_shard_start', 3, shard([raw[i * 16:(i + 1) * 16] for i in range(4)], at_end=False, crc=False))
write('v3_bytes_gzip_zstd', 4, numcodecs.Zstd(3).encode(gzip.compress(raw, 1)))
